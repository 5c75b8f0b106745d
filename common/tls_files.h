// TLS settings from the flags every binary takes (--tls_cert, --tls_key,
// --tls_ca: PEM files): the planner's, the agents' and reshardctl's, and the
// client library's callers'. Read once at start-up and checked there, so
// that a missing or unreadable file stops the program naming the flag
// instead of failing every handshake later.
#ifndef RESHARD_COMMON_TLS_FILES_H_
#define RESHARD_COMMON_TLS_FILES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/tls_config.h"

namespace reshard {

// The flags' values: file paths, empty when not given.
struct TlsFiles {
  std::string cert;
  std::string key;
  std::string ca;

  bool any() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

// A server: plaintext when no flag is given; otherwise --tls_cert and
// --tls_key are both required, and --tls_ca (optional) turns on mutual
// TLS: clients must present a certificate of that CA. Refused naming the
// flag: a key that is not the certificate's, a CA file without a
// certificate, and a certificate that expired by `now` (Unix seconds).
absl::StatusOr<TlsConfig> ServerTlsFromFiles(const TlsFiles& files,
                                             int64_t now);

// A client: plaintext when no flag is given; TLS with any of them.
// --tls_ca verifies the server (else the system's roots); --tls_cert and
// --tls_key, both or neither, are the client's certificate for a server
// that requires one (the key its certificate's; its expiry is the
// server's to judge).
absl::StatusOr<TlsConfig> ClientTlsFromFiles(const TlsFiles& files);

}  // namespace reshard

#endif  // RESHARD_COMMON_TLS_FILES_H_
