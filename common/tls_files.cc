#include "common/tls_files.h"

#include <cstdint>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/secret_file.h"
#include "common/tls_material.h"

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

// What the read files hold: a certificate and its own key, a CA file of
// certificates. Sets the certificate's end of validity.
absl::Status CheckMaterial(const TlsFiles& files, TlsConfig& tls) {
  if (!files.cert.empty()) {
    absl::StatusOr<int64_t> end = CertificateNotAfter(tls.cert_pem);
    if (!end.ok()) {
      return BadFile("tls_cert", files.cert,
                     std::string(end.status().message()));
    }
    tls.cert_not_after = *end;
    absl::Status key = CheckKeyOfCertificate(tls.cert_pem, tls.key_pem);
    if (!key.ok())
      return BadFile("tls_key", files.key, std::string(key.message()));
  }
  if (!files.ca.empty() && CountCertificates(tls.ca_pem) == 0) {
    return BadFile("tls_ca", files.ca, "holds no certificate");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TlsConfig> ServerTlsFromFiles(const TlsFiles& files,
                                             int64_t now) {
  if (!files.any()) return TlsConfig();
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: a server with TLS needs both (and "
        "--tls_ca for mutual TLS)");
  }
  absl::StatusOr<TlsConfig> tls = ReadAll(files);
  if (!tls.ok()) return tls.status();
  if (absl::Status s = CheckMaterial(files, *tls); !s.ok()) return s;
  if (tls->cert_not_after <= now) {
    return BadFile("tls_cert", files.cert,
                   absl::StrCat("the certificate expired at ",
                                absl::FormatTime(
                                    "%Y-%m-%dT%H:%M:%SZ",
                                    absl::FromUnixSeconds(tls->cert_not_after),
                                    absl::UTCTimeZone())));
  }
  return tls;
}

absl::StatusOr<TlsConfig> ClientTlsFromFiles(const TlsFiles& files) {
  if (!files.any()) return TlsConfig();
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: a client certificate needs both");
  }
  absl::StatusOr<TlsConfig> tls = ReadAll(files);
  if (!tls.ok()) return tls.status();
  if (absl::Status s = CheckMaterial(files, *tls); !s.ok()) return s;
  return tls;
}

}  // namespace reshard
