// The flags every reshardctl command takes, before or after the command
// word: --server HOST[:PORT][,HOST[:PORT]...] (a host without a port means
// port 50051), --deadline_seconds D (every call's whole deadline), and the
// credentials every call carries: --job_token_file FILE (else
// $RESHARD_JOB_TOKEN) and --admin_token_file FILE (else
// $RESHARD_ADMIN_TOKEN), and TLS: --tls_ca FILE (the CA the server's
// certificate must chain to), --tls_cert FILE and --tls_key FILE (a client
// certificate for a server that requires one). They
// are taken out of the arguments here so that no command parses them
// itself; --json stays for the command and is also noted, because an error
// is then printed as a JSON object as well (client/exit_codes.h).
#ifndef RESHARD_CLIENT_GLOBAL_FLAGS_H_
#define RESHARD_CLIENT_GLOBAL_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cli_args.h"
#include "common/tls_files.h"

namespace reshard::client {

// The planner service's port when a --server entry names none.
inline constexpr int kDefaultServerPort = 50051;

struct GlobalFlags {
  ServerFlags server;
  bool server_given = false;      // --server itself (not $RESHARD_SERVER)
  bool json = false;              // --json appears among the arguments
  std::string job_token_file;     // empty: not given
  std::string admin_token_file;   // empty: not given
  TlsFiles tls;                   // --tls_cert, --tls_key, --tls_ca
  std::vector<std::string> rest;  // the arguments without the global flags
};

// `text` as a gRPC target: every comma-separated entry that names no port
// gets port 50051 ("h1,h2:7" -> "h1:50051,h2:7"; "::1" and "[::1]" ->
// "[::1]:50051"). INVALID_ARGUMENT naming `flag` for an empty entry.
absl::StatusOr<std::string> ServerTarget(absl::string_view text,
                                         absl::string_view flag);

// Takes the global flags out of `args` (the command line after the program
// name). `env_server` ($RESHARD_SERVER; null or empty when unset) is the
// server when --server is not given; 127.0.0.1:50051 otherwise.
// INVALID_ARGUMENT naming the flag for a missing or bad value.
absl::StatusOr<GlobalFlags> ParseGlobalFlags(
    const std::vector<std::string>& args, const char* env_server);

// Reads the credentials into flags.server (client/cli_args.h): each token
// from its file when given, else from its environment variable, else none,
// and the TLS files (common/tls_files.h, a client's rules).
// INVALID_ARGUMENT naming the flag or variable for an unreadable file or
// a secret gRPC metadata cannot carry (common/secret_file.h).
absl::Status ReadCredentials(GlobalFlags& flags);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_GLOBAL_FLAGS_H_
