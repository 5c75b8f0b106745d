#include "common/tls_files.h"

#include <cstdint>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/secret_file.h"

namespace reshard {
namespace {

// A PEM file larger than this is not a certificate chain or a key.
constexpr int64_t kMaxPemBytes = 1 << 20;

absl::Status BadFile(const char* flag, const std::string& path,
                     const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, "=", path, ": ", why));
}

// The PEM text of `path` (--FLAG's): INVALID_ARGUMENT naming the flag when
// it cannot be read or holds no PEM block.
absl::StatusOr<std::string> ReadPem(const char* flag, const std::string& path) {
  absl::StatusOr<std::string> pem =
      ReadFileUpTo(absl::StrCat("--", flag, "=", path), path, kMaxPemBytes);
  if (!pem.ok()) return pem.status();
  if (static_cast<int64_t>(pem->size()) > kMaxPemBytes) {
    return BadFile(flag, path, "larger than 1 MiB: not a PEM file");
  }
  if (!absl::StrContains(*pem, "-----BEGIN ")) {
    return BadFile(flag, path, "holds no PEM block (-----BEGIN ...)");
  }
  return pem;
}

// Reads every given file of `files` into an enabled config.
absl::StatusOr<TlsConfig> ReadAll(const TlsFiles& files) {
  TlsConfig tls;
  tls.enabled = true;
  for (auto [flag, path, out] :
       {std::tuple{"tls_cert", &files.cert, &tls.cert_pem},
        std::tuple{"tls_key", &files.key, &tls.key_pem},
        std::tuple{"tls_ca", &files.ca, &tls.ca_pem}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> pem = ReadPem(flag, *path);
    if (!pem.ok()) return pem.status();
    *out = *std::move(pem);
  }
  return tls;
}

}  // namespace

absl::StatusOr<TlsConfig> ServerTlsFromFiles(const TlsFiles& files) {
  if (!files.any()) return TlsConfig();
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: a server with TLS needs both (and "
        "--tls_ca for mutual TLS)");
  }
  return ReadAll(files);
}

absl::StatusOr<TlsConfig> ClientTlsFromFiles(const TlsFiles& files) {
  if (!files.any()) return TlsConfig();
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: a client certificate needs both");
  }
  return ReadAll(files);
}

}  // namespace reshard
