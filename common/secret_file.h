// A secret given as a file (--admin_token_file): what a Kubernetes Secret
// mounts, and never on a command line where `ps` would show it. The file
// holds the secret alone; trailing whitespace (an editor's newline) is not
// part of it.
#ifndef RESHARD_COMMON_SECRET_FILE_H_
#define RESHARD_COMMON_SECRET_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// The secret in `path`. INVALID_ARGUMENT starting with `--FLAG=PATH:` when
// the file cannot be read or holds nothing but whitespace.
absl::StatusOr<std::string> ReadSecretFile(absl::string_view flag,
                                           const std::string& path);

}  // namespace reshard

#endif  // RESHARD_COMMON_SECRET_FILE_H_
