// The credentials a call to the Coordinator carries as gRPC metadata
// (common/credential_headers.h), read in one place and handed to the
// Coordinator's core, which decides what they admit
// (coordinator/job_token.h).
#ifndef RESHARD_SERVER_CALLER_CREDENTIALS_H_
#define RESHARD_SERVER_CALLER_CREDENTIALS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "coordinator/job_token.h"
#include "grpcpp/server_context.h"
#include "server/request_plan.h"

namespace reshard::server {

// The value of metadata `key` in the call, or nullopt.
std::optional<absl::string_view> MetadataValue(
    const grpc::ServerContextBase& ctx, const char* key);

// The call's job token (none: empty) and whether it proves the planner's
// admin token (`admin_token`; empty: no admin is configured and an admin
// header means nothing). INVALID_ARGUMENT naming the header for a job
// token that is not 1 to kMaxSecretBytes printable bytes;
// PERMISSION_DENIED for an admin token that is not the planner's.
absl::StatusOr<coordinator::Caller> CallerOf(const grpc::ServerContextBase& ctx,
                                             const std::string& admin_token);

// The credential a call counts in: the share of its job token under
// `options.token_rules` (coordinator/token_rules.h; "" without a token),
// which owns the meshes it registers and keys its planning queue and plan
// cache scope. PERMISSION_DENIED naming the header for a token the rules
// do not accept.
absl::StatusOr<std::string> CredentialOf(const grpc::ServerContextBase& ctx,
                                         const ServiceOptions& options);

// The plan cache scope of a credential (PlanRequest::cache_scope), also
// its planning queue's key; never 0, the shared scope.
uint64_t CacheScopeOf(const std::string& credential);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_CALLER_CREDENTIALS_H_
