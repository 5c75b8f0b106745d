// What a caller is told when its call to a server failed before any
// answer and its TLS settings are the likely cause: gRPC only says that
// the connection closed ("Socket closed"), and the server alone logs
// that the handshake failed (README.md, Security).
#ifndef RESHARD_COMMON_TLS_HINT_H_
#define RESHARD_COMMON_TLS_HINT_H_

#include <string>

#include "absl/status/status.h"
#include "common/tls_config.h"

namespace reshard {

// The likely TLS mistake behind `status` (UNAVAILABLE as gRPC words it)
// for a client with `tls`, naming the flags to pass; empty when nothing
// points to TLS.
std::string TlsHint(const absl::Status& status, const TlsConfig& tls);

// `status` with TlsHint's hint appended to its message, or as it is.
absl::Status WithTlsHint(const absl::Status& status, const TlsConfig& tls);

}  // namespace reshard

#endif  // RESHARD_COMMON_TLS_HINT_H_
