#include "server/admin_token.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/same_secret.h"
#include "server/caller_credentials.h"

namespace reshard::server {

absl::StatusOr<bool> ProvesAdmin(const grpc::ServerContextBase& ctx,
                                 const std::string& admin_token) {
  const std::optional<absl::string_view> given =
      MetadataValue(ctx, kAdminTokenHeader);
  if (!given.has_value() || admin_token.empty()) return false;
  if (!SameSecret(*given, admin_token)) {
    return absl::PermissionDeniedError(
        absl::StrCat("metadata ", kAdminTokenHeader,
                     ": the admin token does not match the planner's"));
  }
  return true;
}

absl::Status CheckAdminToken(const grpc::ServerContextBase& ctx,
                             const std::string& admin_token,
                             absl::string_view rpc) {
  if (admin_token.empty()) return absl::OkStatus();
  absl::StatusOr<bool> admin = ProvesAdmin(ctx, admin_token);
  if (!admin.ok()) {
    return absl::Status(admin.status().code(),
                        absl::StrCat(rpc, ": ", admin.status().message()));
  }
  if (!*admin) {
    return absl::UnauthenticatedError(absl::StrCat(
        rpc, " needs the planner's admin token (metadata ", kAdminTokenHeader,
        "; reshardctl mesh delete --admin_token_file FILE)"));
  }
  return absl::OkStatus();
}

}  // namespace reshard::server
