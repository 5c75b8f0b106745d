// gRPC's own log lines, through the planner's log (one structured line
// each), and the TLS handshakes they say failed, counted by likely cause.
// gRPC 1.51 has no server hook for a failed handshake: it only logs
// "Handshake failed with fatal error SSL_ERROR_SSL: ..." with OpenSSL's
// reason, which names what the client did wrong (README.md, Security).
#ifndef RESHARD_SERVER_GRPC_LOG_H_
#define RESHARD_SERVER_GRPC_LOG_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace reshard::server {

// Why a client's TLS handshake failed, the `reason` label of
// reshard_tls_handshake_failures_total.
enum class HandshakeFailure {
  kNotTls,                     // plaintext to a TLS port
  kNoClientCertificate,        // the server asks for one (--tls_ca)
  kClientCertificateRejected,  // not of --tls_ca, expired, ...
  kServerCertificateRejected,  // the client does not trust the server's
  kOther,
};
inline constexpr int kHandshakeFailureCount = 5;

// The label of each, in the enum's order.
absl::string_view HandshakeFailureName(HandshakeFailure failure);

// The failure a gRPC log message reports; nullopt when it reports none.
std::optional<HandshakeFailure> HandshakeFailureOf(absl::string_view message);

// Failed handshakes so far, by HandshakeFailure.
using HandshakeFailureCounts =
    std::array<std::atomic<int64_t>, kHandshakeFailureCount>;
const HandshakeFailureCounts& HandshakeFailures();

// Sends gRPC's log lines to spdlog and counts the handshakes they say
// failed. Call once, before gRPC starts.
void RouteGrpcLog();

}  // namespace reshard::server

#endif  // RESHARD_SERVER_GRPC_LOG_H_
