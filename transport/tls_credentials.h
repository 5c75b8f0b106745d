// gRPC credentials from a TlsConfig (common/tls_config.h): the one place
// where the planner, the agents, reshardctl, reshard-loadgen and the client
// library turn TLS settings into what gRPC takes. Header-only, so that the
// installed client library needs no library of its own for it.
#ifndef RESHARD_TRANSPORT_TLS_CREDENTIALS_H_
#define RESHARD_TRANSPORT_TLS_CREDENTIALS_H_

#include <memory>

#include "common/tls_config.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace reshard {

// Plaintext, TLS, or TLS that requires and verifies a client certificate
// of tls.ca_pem (mutual TLS).
inline std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(
    const TlsConfig& tls) {
  if (!tls.enabled) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls.ca_pem.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.ca_pem;
  options.pem_key_cert_pairs.push_back({tls.key_pem, tls.cert_pem});
  return grpc::SslServerCredentials(options);
}

// Plaintext, or TLS verifying the server against tls.ca_pem (the system's
// roots when empty) and presenting the client's certificate when given.
inline std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(
    const TlsConfig& tls) {
  if (!tls.enabled) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls.ca_pem;
  options.pem_private_key = tls.key_pem;
  options.pem_cert_chain = tls.cert_pem;
  return grpc::SslCredentials(options);
}

}  // namespace reshard

#endif  // RESHARD_TRANSPORT_TLS_CREDENTIALS_H_
