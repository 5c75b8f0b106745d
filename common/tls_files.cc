#include "common/tls_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

// A PEM file larger than this is not a certificate chain or a key.
constexpr std::streamsize kMaxPemBytes = 1 << 20;

absl::Status BadFile(const char* flag, const std::string& path,
                     const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, "=", path, ": ", why));
}

// The PEM text of `path` (--FLAG's): INVALID_ARGUMENT naming the flag when
// it cannot be read or holds no PEM block.
absl::StatusOr<std::string> ReadPem(const char* flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return BadFile(flag, path,
                   absl::StrCat("cannot read it (", std::strerror(errno), ")"));
  }
  std::string pem(kMaxPemBytes + 1, '\0');
  in.read(pem.data(), static_cast<std::streamsize>(pem.size()));
  if (in.bad()) return BadFile(flag, path, "cannot read it (not a file)");
  pem.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<std::streamsize>(pem.size()) > kMaxPemBytes) {
    return BadFile(flag, path, "larger than 1 MiB: not a PEM file");
  }
  if (!absl::StrContains(pem, "-----BEGIN ")) {
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
