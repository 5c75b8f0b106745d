// A call that failed before any answer names the TLS flag that likely
// fixes it, from the caller's own TLS settings; other failures get none.
#include "common/tls_hint.h"

#include "gtest/gtest.h"

namespace reshard {
namespace {

const absl::Status kClosed = absl::UnavailableError(
    "connections to all backends failing; last error: UNAVAILABLE: "
    "ipv4:127.0.0.1:5000: Socket closed");

TEST(TlsHintTest, APlaintextClientIsToldTheServerMayRequireTls) {
  EXPECT_EQ(WithTlsHint(kClosed, TlsConfig{}).message(),
            std::string(kClosed.message()) +
                " (the server may require TLS: pass --tls_ca (and "
                "--tls_cert/--tls_key if it asks for a client certificate); "
                "or it holds its most connections from this address "
                "(--max_connections_per_peer))");
}

TEST(TlsHintTest, ATlsClientWithoutACertificateIsToldToPresentOne) {
  TlsConfig tls;
  tls.enabled = true;
  EXPECT_EQ(TlsHint(kClosed, tls),
            "the server may require a client certificate: pass --tls_cert "
            "and --tls_key; or it holds its most connections from this "
            "address (--max_connections_per_peer)");
  tls.cert_pem = "PEM";
  EXPECT_EQ(TlsHint(kClosed, tls),
            "the server may not accept this client certificate: it must be "
            "of the server's --tls_ca and unexpired; or it holds its most "
            "connections from this address (--max_connections_per_peer)");
  const absl::Status handshake = absl::UnavailableError(
      "failed to connect to all addresses; last error: UNKNOWN: "
      "ipv4:127.0.0.1:5000: Ssl handshake failed: SSL_ERROR_SSL: "
      "error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED");
  EXPECT_EQ(TlsHint(handshake, tls),
            "the server may not serve TLS, or its certificate is not of "
            "--tls_ca");
}

TEST(TlsHintTest, OtherFailuresGetNoHint) {
  const absl::Status refused = absl::UnavailableError(
      "failed to connect to all addresses; last error: UNKNOWN: "
      "ipv4:127.0.0.1:1: Failed to connect to remote host: Connection "
      "refused");
  EXPECT_EQ(TlsHint(refused, TlsConfig{}), "");
  EXPECT_EQ(WithTlsHint(absl::NotFoundError("Socket closed"), TlsConfig{}),
            absl::NotFoundError("Socket closed"));
}

}  // namespace
}  // namespace reshard
