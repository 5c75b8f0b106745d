#include "common/tls_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain this process presents (with --tls_key): "
          "the planner serves TLS with it; an agent or client presents it "
          "to a planner that requires client certificates");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA: the planner requires client certificates of it (mutual "
          "TLS); an agent or client talks TLS and verifies the planner's "
          "certificate against it");

namespace reshard {

TlsFiles TlsFilesFromFlags() {
  return {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
          absl::GetFlag(FLAGS_tls_ca)};
}

}  // namespace reshard
