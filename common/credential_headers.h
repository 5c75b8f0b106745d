// The gRPC metadata keys credentials travel in, shared by the servers that
// check them and the clients that send them. Metadata, not message fields:
// no request type changes, and the service adapter checks them in one
// place.
#ifndef RESHARD_COMMON_CREDENTIAL_HEADERS_H_
#define RESHARD_COMMON_CREDENTIAL_HEADERS_H_

namespace reshard {

// The planner's admin token (reshard-planner --admin_token_file).
inline constexpr char kAdminTokenHeader[] = "x-reshard-admin-token";

}  // namespace reshard

#endif  // RESHARD_COMMON_CREDENTIAL_HEADERS_H_
