#include "client/global_flags.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/credential_headers.h"
#include "common/secret_file.h"

namespace reshard::client {
namespace {

// One entry of a --server list with its port made explicit.
std::string WithPort(absl::string_view entry) {
  // gRPC URIs ("dns:///h:1", "unix:/path") say what they mean already.
  if (absl::StrContains(entry, ":/")) return std::string(entry);
  if (absl::StartsWith(entry, "[")) {  // [IPv6] or [IPv6]:PORT
    return entry.find("]:") == absl::string_view::npos
               ? absl::StrCat(entry, ":", kDefaultServerPort)
               : std::string(entry);
  }
  const size_t colons = std::count(entry.begin(), entry.end(), ':');
  if (colons == 0) return absl::StrCat(entry, ":", kDefaultServerPort);
  if (colons > 1) return absl::StrCat("[", entry, "]:", kDefaultServerPort);
  return std::string(entry);
}

// Reads the value of global flag `name` at args[i] (`--name V` or
// `--name=V`); nullopt when args[i] is not that flag. Advances `i` past a
// separate value.
absl::StatusOr<std::optional<std::string>> FlagValue(
    const std::vector<std::string>& args, size_t& i, absl::string_view name) {
  absl::string_view arg = args[i];
  if (!absl::ConsumePrefix(&arg, "--") || !absl::ConsumePrefix(&arg, name)) {
    return std::optional<std::string>();
  }
  if (absl::ConsumePrefix(&arg, "=")) return std::optional(std::string(arg));
  if (!arg.empty()) return std::optional<std::string>();  // --server_x
  if (i + 1 >= args.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " needs a value"));
  }
  return std::optional(args[++i]);
}

// Takes a global flag that names a file (a token or TLS file) at args[i]
// into `flags`; false when args[i] is none of them.
absl::StatusOr<bool> TakeFileFlag(const std::vector<std::string>& args,
                                  size_t& i, GlobalFlags& flags) {
  for (auto [name, out] :
       {std::pair{"job_token_file", &flags.job_token_file},
        std::pair{"admin_token_file", &flags.admin_token_file},
        std::pair{"tls_cert", &flags.tls.cert},
        std::pair{"tls_key", &flags.tls.key},
        std::pair{"tls_ca", &flags.tls.ca}}) {
    absl::StatusOr<std::optional<std::string>> value = FlagValue(args, i, name);
    if (!value.ok()) return value.status();
    if (value->has_value()) {
      *out = **value;
      return true;
    }
  }
  return false;
}

absl::StatusOr<absl::Duration> ParseDeadline(const std::string& text) {
  double seconds = 0;
  if (!absl::SimpleAtod(text, &seconds) || !std::isfinite(seconds) ||
      seconds <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--deadline_seconds: \"", text, "\" is not a number of seconds > 0"));
  }
  return absl::Seconds(seconds);
}

}  // namespace

absl::StatusOr<std::string> ServerTarget(absl::string_view text,
                                         absl::string_view flag) {
  std::vector<std::string> entries;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    // ":7" names no host; "::1" is IPv6's loopback.
    if (entry.empty() ||
        (absl::StartsWith(entry, ":") && !absl::StartsWith(entry, "::"))) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": \"", text, "\" must be HOST[:PORT][,HOST[:PORT]...]"));
    }
    entries.push_back(WithPort(entry));
  }
  return absl::StrJoin(entries, ",");
}

absl::StatusOr<GlobalFlags> ParseGlobalFlags(
    const std::vector<std::string>& args, const char* env_server) {
  GlobalFlags flags;
  std::string server = env_server != nullptr && *env_server != '\0'
                           ? env_server
                           : flags.server.target;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::StatusOr<std::optional<std::string>> value =
        FlagValue(args, i, "server");
    if (!value.ok()) return value.status();
    if (value->has_value()) {
      server = **value;
      flags.server_given = true;
      continue;
    }
    value = FlagValue(args, i, "deadline_seconds");
    if (!value.ok()) return value.status();
    if (value->has_value()) {
      absl::StatusOr<absl::Duration> deadline = ParseDeadline(**value);
      if (!deadline.ok()) return deadline.status();
      flags.server.deadline = *deadline;
      continue;
    }
    absl::StatusOr<bool> file = TakeFileFlag(args, i, flags);
    if (!file.ok()) return file.status();
    if (*file) continue;
    flags.json = flags.json || args[i] == "--json";
    flags.rest.push_back(args[i]);
  }
  absl::StatusOr<std::string> target =
      ServerTarget(server, flags.server_given ? "--server" : "RESHARD_SERVER");
  if (!target.ok()) return target.status();
  flags.server.target = *std::move(target);
  return flags;
}

absl::Status ReadCredentials(GlobalFlags& flags) {
  absl::StatusOr<std::string> job_token =
      SecretFromFileOrEnv("job_token_file", flags.job_token_file, kJobTokenEnv);
  if (!job_token.ok()) return job_token.status();
  absl::StatusOr<std::string> admin_token = SecretFromFileOrEnv(
      "admin_token_file", flags.admin_token_file, kAdminTokenEnv);
  if (!admin_token.ok()) return admin_token.status();
  absl::StatusOr<TlsConfig> tls = ClientTlsFromFiles(flags.tls);
  if (!tls.ok()) return tls.status();
  flags.server.job_token = *std::move(job_token);
  flags.server.admin_token = *std::move(admin_token);
  flags.server.tls = *std::move(tls);
  return absl::OkStatus();
}

}  // namespace reshard::client
