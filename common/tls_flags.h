// The TLS flags of every program that parses Abseil flags (reshard-planner,
// reshard-agent, reshard-loadgen), defined once here with one meaning:
// --tls_cert and --tls_key are the certificate this process presents (the
// planner's, or a client's for mutual TLS), --tls_ca the CA it trusts (the
// planner requires client certificates of it; a client verifies the
// planner against it). reshardctl reads the same names with its own global
// flag parser (client/global_flags.h).
#ifndef RESHARD_COMMON_TLS_FLAGS_H_
#define RESHARD_COMMON_TLS_FLAGS_H_

#include "common/tls_files.h"

namespace reshard {

// The flags' values (file paths; empty when not given).
TlsFiles TlsFilesFromFlags();

}  // namespace reshard

#endif  // RESHARD_COMMON_TLS_FLAGS_H_
