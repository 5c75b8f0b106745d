// gRPC's handshake failure lines, as OpenSSL words them on the server,
// name their likely cause; other lines report none.
#include "server/grpc_log.h"

#include "gtest/gtest.h"

namespace reshard::server {
namespace {

TEST(GrpcLogTest, HandshakeFailuresNameTheirCause) {
  const struct {
    const char* message;
    HandshakeFailure failure;
  } cases[] = {
      {"Handshake failed with fatal error SSL_ERROR_SSL: error:0A00010B:SSL "
       "routines::wrong version number.",
       HandshakeFailure::kNotTls},
      {"Handshake failed with fatal error SSL_ERROR_SSL: error:0A0000C7:SSL "
       "routines::peer did not return a certificate.",
       HandshakeFailure::kNoClientCertificate},
      {"Handshake failed with fatal error SSL_ERROR_SSL: error:0A000086:SSL "
       "routines::certificate verify failed.",
       HandshakeFailure::kClientCertificateRejected},
      {"Handshake failed with fatal error SSL_ERROR_SSL: error:0A000418:SSL "
       "routines::tlsv1 alert unknown ca.",
       HandshakeFailure::kServerCertificateRejected},
      {"Handshake failed with fatal error SSL_ERROR_SYSCALL: Connection "
       "reset by peer.",
       HandshakeFailure::kOther},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(HandshakeFailureOf(c.message), c.failure) << c.message;
  }
  EXPECT_EQ(HandshakeFailureOf("Failed to add port"), std::nullopt);
  EXPECT_EQ(HandshakeFailureName(HandshakeFailure::kNoClientCertificate),
            "no_client_certificate");
}

}  // namespace
}  // namespace reshard::server
