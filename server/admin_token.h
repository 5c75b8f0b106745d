// The planner's admin credential (--admin_token_file): the calls that
// touch what other clients own (DeleteMesh) need it once one is
// configured. It travels as gRPC metadata (common/credential_headers.h).
#ifndef RESHARD_SERVER_ADMIN_TOKEN_H_
#define RESHARD_SERVER_ADMIN_TOKEN_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"

namespace reshard::server {

// Whether the call proves the admin token: false without one configured
// (`admin_token` empty) or in its metadata, PERMISSION_DENIED naming the
// header for another one. Compared in constant time. The one check every
// admin decision rests on (CheckAdminToken, CallerOf).
absl::StatusOr<bool> ProvesAdmin(const grpc::ServerContextBase& ctx,
                                 const std::string& admin_token);

// OK when no token is configured (`admin_token` empty: the call is open to
// every client) or when the call's metadata carries it. Otherwise
// UNAUTHENTICATED when the call carries no token and PERMISSION_DENIED
// when it carries another, both naming `rpc`.
absl::Status CheckAdminToken(const grpc::ServerContextBase& ctx,
                             const std::string& admin_token,
                             absl::string_view rpc);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_ADMIN_TOKEN_H_
