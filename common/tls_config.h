// TLS for a gRPC endpoint (README.md, Security): what a server or a client
// presents and trusts, as PEM text read once at start-up
// (common/tls_files.h). A plain value; transport/tls_credentials.h turns
// it into gRPC credentials.
#ifndef RESHARD_COMMON_TLS_CONFIG_H_
#define RESHARD_COMMON_TLS_CONFIG_H_

#include <cstdint>
#include <string>

namespace reshard {

struct TlsConfig {
  bool enabled = false;  // false: plaintext (the fields are unused)
  // A server: the CA its clients' certificates must chain to (mutual TLS);
  // empty: clients present none. A client: the CA the server's certificate
  // must chain to; empty: the system's roots.
  std::string ca_pem;
  // A server: its certificate chain and key (required). A client: its own,
  // for a server that asks (mutual TLS); empty: none.
  std::string cert_pem;
  std::string key_pem;
  // When cert_pem's certificate stops being valid (Unix seconds); 0: none.
  int64_t cert_not_after = 0;
};

}  // namespace reshard

#endif  // RESHARD_COMMON_TLS_CONFIG_H_
