#include "client/cli_args.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace reshard::client {

absl::StatusOr<CliArgs> CliArgs::Parse(absl::Span<const std::string> args,
                                       const std::set<std::string>& options,
                                       const std::set<std::string>& switches) {
  CliArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\""));
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (switches.count(name)) {
      if (value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " takes no value"));
      }
      parsed.values_[name].push_back("true");
      continue;
    }
    if (!options.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (!value.has_value()) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " needs a value"));
      }
      value = args[++i];
    }
    parsed.values_[name].push_back(*value);
  }
  return parsed;
}

std::optional<std::string> CliArgs::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> CliArgs::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

absl::Status ParseIntFlag(const CliArgs& args, const char* flag, int min,
                          int& out) {
  const std::optional<std::string> value = args.Get(flag);
  if (!value.has_value()) return absl::OkStatus();
  if (!absl::SimpleAtoi(*value, &out) || out < min) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, ": \"", *value, "\" is not an integer >= ", min));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> ParseIntList(const std::string& text,
                                                  const std::string& flag) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": \"", part, "\" is not an integer (in \"",
                       text, "\")"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Client>> ConnectClient(
    const ServerFlags& server) {
  ClientOptions options;
  options.target = server.target;
  options.max_attempts = 2;
  if (server.deadline.has_value()) {
    options.timeout = *server.deadline;
    options.deadline = *server.deadline;
  }
  return Client::Create(options);
}

}  // namespace reshard::client
