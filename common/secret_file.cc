#include "common/secret_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace reshard {

absl::Status CheckSecretText(absl::string_view source,
                             absl::string_view secret) {
  if (secret.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": the secret is empty"));
  }
  if (static_cast<int64_t>(secret.size()) > kMaxSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": the secret has ", secret.size(),
                     " bytes, at most ", kMaxSecretBytes));
  }
  for (size_t i = 0; i < secret.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(secret[i]);
    if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": byte ", i,
          " of the secret is not printable ASCII (gRPC metadata carries "
          "only that)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileUpTo(absl::string_view source,
                                         const std::string& path,
                                         int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": cannot read it (", std::strerror(errno), ")"));
  }
  // istream::read turns a failed read (a directory) into badbit instead of
  // an exception; a huge file is not read whole.
  std::string bytes(static_cast<size_t>(max_bytes + 1), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": cannot read it (not a file)"));
  }
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

absl::StatusOr<std::string> ReadSecretFile(absl::string_view flag,
                                           const std::string& path) {
  const std::string source = absl::StrCat("--", flag, "=", path);
  // The longest secret and its newline, and one byte more.
  absl::StatusOr<std::string> read =
      ReadFileUpTo(source, path, kMaxSecretBytes + 1);
  if (!read.ok()) return read.status();
  std::string secret = *std::move(read);
  absl::StripTrailingAsciiWhitespace(&secret);
  if (secret.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": the file holds no secret"));
  }
  absl::Status s = CheckSecretText(source, secret);
  if (!s.ok()) return s;
  return secret;
}

absl::StatusOr<std::string> SecretFromFileOrEnv(absl::string_view flag,
                                                const std::string& path,
                                                const char* env_var) {
  if (!path.empty()) return ReadSecretFile(flag, path);
  const char* value = std::getenv(env_var);
  if (value == nullptr || *value == '\0') return std::string();
  absl::Status s = CheckSecretText(env_var, value);
  if (!s.ok()) return s;
  return std::string(value);
}

}  // namespace reshard
