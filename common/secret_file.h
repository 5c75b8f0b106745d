// A secret given as a file (--admin_token_file, --job_token_file): what a
// Kubernetes Secret mounts, and never on a command line where `ps` would
// show it. The file holds the secret alone; trailing whitespace (an
// editor's newline) is not part of it. Secrets travel as gRPC metadata,
// so they are printable ASCII.
#ifndef RESHARD_COMMON_SECRET_FILE_H_
#define RESHARD_COMMON_SECRET_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// The longest secret accepted anywhere (files, the environment, metadata).
inline constexpr int64_t kMaxSecretBytes = 4096;

// At most `max_bytes` + 1 bytes of `path` (one more than allowed tells
// the caller it is too long), read without throwing. INVALID_ARGUMENT
// "SOURCE: cannot read it (WHY)" when it cannot be opened or read (a
// directory). The secret and PEM files' one reader.
absl::StatusOr<std::string> ReadFileUpTo(absl::string_view source,
                                         const std::string& path,
                                         int64_t max_bytes);

// OK when `secret` is 1 to kMaxSecretBytes bytes of printable ASCII (what
// gRPC metadata carries); INVALID_ARGUMENT starting with `source` (where it
// came from: "--job_token_file=PATH", "RESHARD_JOB_TOKEN") otherwise. The
// message never shows the secret.
absl::Status CheckSecretText(absl::string_view source,
                             absl::string_view secret);

// The secret in `path`. INVALID_ARGUMENT starting with `--FLAG=PATH:` when
// the file cannot be read, holds nothing but whitespace, or fails
// CheckSecretText.
absl::StatusOr<std::string> ReadSecretFile(absl::string_view flag,
                                           const std::string& path);

// The secret of `--FLAG` when `path` is not empty, else the environment
// variable `env_var` when it is set and not empty (checked the same way),
// else "" (no secret).
absl::StatusOr<std::string> SecretFromFileOrEnv(absl::string_view flag,
                                                const std::string& path,
                                                const char* env_var);

}  // namespace reshard

#endif  // RESHARD_COMMON_SECRET_FILE_H_
