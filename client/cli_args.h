// Command-line parsing for reshardctl: `--name value`, `--name=value`,
// repeatable options and boolean switches, with errors that name the flag;
// and the client every command that calls the service connects with.
#ifndef RESHARD_CLIENT_CLI_ARGS_H_
#define RESHARD_CLIENT_CLI_ARGS_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "reshard/client.h"

namespace reshard::client {

class CliArgs {
 public:
  // Parses `args` (after the subcommand). `switches` take no value; every
  // other name in `options` takes one. INVALID_ARGUMENT on unknown flags,
  // missing values or stray positional words.
  static absl::StatusOr<CliArgs> Parse(absl::Span<const std::string> args,
                                       const std::set<std::string>& options,
                                       const std::set<std::string>& switches);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given for `name`.
  std::optional<std::string> Get(const std::string& name) const;
  // Every value given for `name`, in order.
  std::vector<std::string> GetAll(const std::string& name) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// Reads integer flag `flag` into `out` when given (left as is otherwise);
// INVALID_ARGUMENT `--flag: "x" is not an integer >= min`.
absl::Status ParseIntFlag(const CliArgs& args, const char* flag, int min,
                          int& out);

// Reads byte-count flag `flag` (common/byte_size.h: "65536", "1MiB") into
// `out` when given; INVALID_ARGUMENT `--flag: "x" is not a byte count ...`,
// or `... is below min` for a count under `min`.
absl::Status ParseByteFlag(const CliArgs& args, const char* flag, int64_t min,
                           int64_t& out);

// Parses "16,16" into sizes; INVALID_ARGUMENT names `flag`.
absl::StatusOr<std::vector<int64_t>> ParseIntList(const std::string& text,
                                                  const std::string& flag);

// The service a command calls and how long each call may take (the global
// flags --server and --deadline_seconds, client/global_flags.h).
struct ServerFlags {
  // HOST:PORT, or several comma-separated.
  std::string target = "127.0.0.1:50051";
  // Bounds every call, retries included; unset: the client's per-attempt
  // timeout (10 s) for Planner calls, 300 s for `job run`.
  std::optional<absl::Duration> deadline;
  // Sent with every call (ClientOptions); empty: none.
  std::string job_token;
  std::string admin_token;
  TlsConfig tls;  // disabled: plaintext
};

// A client of `server` as the CLI uses it: one retry of UNAVAILABLE, the
// whole call within server.deadline when set, the library's other
// defaults.
absl::StatusOr<std::unique_ptr<Client>> ConnectClient(
    const ServerFlags& server);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CLI_ARGS_H_
