#include "common/secret_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace reshard {

absl::StatusOr<std::string> ReadSecretFile(absl::string_view flag,
                                           const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", path,
                                                   ": cannot read it (",
                                                   std::strerror(errno), ")"));
  }
  std::string secret((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
  absl::StripTrailingAsciiWhitespace(&secret);
  if (secret.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", path, ": the file holds no secret"));
  }
  return secret;
}

}  // namespace reshard
