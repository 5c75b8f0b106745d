#include "client/cli_args.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/byte_size.h"

namespace reshard::client {
namespace {

// Levenshtein distance: insertions, deletions and substitutions.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown flag --plannr; did you mean --planner?" when a known flag is
// within a third of the name's length (at least 2) of edits.
absl::Status UnknownFlag(const std::string& name,
                         const std::set<std::string>& options,
                         const std::set<std::string>& switches) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::set<std::string>* known : {&options, &switches}) {
    for (const std::string& flag : *known) {
      const size_t d = EditDistance(name, flag);
      if (d < best_distance) {
        best_distance = d;
        best = flag;
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown flag --", name,
      best.empty() ? "" : absl::StrCat("; did you mean --", best, "?")));
}

}  // namespace

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
    if (!options.count(name)) return UnknownFlag(name, options, switches);
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

absl::Status ParseByteFlag(const CliArgs& args, const char* flag, int64_t min,
                           int64_t& out) {
  const std::optional<std::string> value = args.Get(flag);
  if (!value.has_value()) return absl::OkStatus();
  absl::StatusOr<int64_t> bytes = ParseByteSize(*value);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": ", bytes.status().message()));
  }
  if (*bytes < min) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, ": \"", *value, "\" is below ", min, " bytes"));
  }
  out = *bytes;
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
  options.admin_token = server.admin_token;
  options.job_token = server.job_token;
  options.tls = server.tls;
  options.max_attempts = 2;
  if (server.deadline.has_value()) {
    options.timeout = *server.deadline;
    options.deadline = *server.deadline;
  }
  return Client::Create(options);
}

}  // namespace reshard::client
