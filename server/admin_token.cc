#include "server/admin_token.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/same_secret.h"
#include "server/caller_credentials.h"

namespace reshard::server {

absl::Status CheckAdminToken(const grpc::ServerContextBase& ctx,
                             const std::string& admin_token,
                             absl::string_view rpc) {
  if (admin_token.empty()) return absl::OkStatus();
  const std::optional<absl::string_view> given =
      MetadataValue(ctx, kAdminTokenHeader);
  if (!given.has_value()) {
    return absl::UnauthenticatedError(absl::StrCat(
        rpc, " needs the planner's admin token (metadata ", kAdminTokenHeader,
        "; reshardctl mesh delete --admin_token_file FILE)"));
  }
  if (!SameSecret(*given, admin_token)) {
    return absl::PermissionDeniedError(
        absl::StrCat(rpc, ": the admin token does not match the planner's"));
  }
  return absl::OkStatus();
}

}  // namespace reshard::server
