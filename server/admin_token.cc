#include "server/admin_token.h"

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/same_secret.h"

namespace reshard::server {

absl::Status CheckAdminToken(const grpc::ServerContextBase& ctx,
                             const std::string& admin_token,
                             absl::string_view rpc) {
  if (admin_token.empty()) return absl::OkStatus();
  const auto& metadata = ctx.client_metadata();
  const auto it = metadata.find(kAdminTokenHeader);
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(absl::StrCat(
        rpc, " needs the planner's admin token (metadata ", kAdminTokenHeader,
        "; reshardctl mesh delete --admin_token_file FILE)"));
  }
  const absl::string_view given(it->second.data(), it->second.size());
  if (!SameSecret(given, admin_token)) {
    return absl::PermissionDeniedError(
        absl::StrCat(rpc, ": the admin token does not match the planner's"));
  }
  return absl::OkStatus();
}

}  // namespace reshard::server
