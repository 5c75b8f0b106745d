// What the TLS files hold, read with OpenSSL at start-up so that a bad one
// stops the program naming its flag before it says it serves (README.md,
// Security): a certificate's end of validity, whether a key is its
// certificate's, and whether a CA file holds certificates at all.
#ifndef RESHARD_COMMON_TLS_MATERIAL_H_
#define RESHARD_COMMON_TLS_MATERIAL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// The end of validity (Unix seconds) of the first certificate in `pem`;
// INVALID_ARGUMENT "holds no certificate" when none parses.
absl::StatusOr<int64_t> CertificateNotAfter(absl::string_view pem);

// How many certificates `pem` holds (a CA bundle); 0 when none parses.
int CountCertificates(absl::string_view pem);

// OK when `key_pem` is a private key and the first certificate of
// `cert_pem` is its; INVALID_ARGUMENT saying which is wrong otherwise.
absl::Status CheckKeyOfCertificate(absl::string_view cert_pem,
                                   absl::string_view key_pem);

}  // namespace reshard

#endif  // RESHARD_COMMON_TLS_MATERIAL_H_
