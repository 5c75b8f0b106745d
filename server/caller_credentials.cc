#include "server/caller_credentials.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/credential_headers.h"
#include "common/fnv1a.h"
#include "common/secret_file.h"
#include "server/admin_token.h"

namespace reshard::server {
std::optional<absl::string_view> MetadataValue(
    const grpc::ServerContextBase& ctx, const char* key) {
  const auto& metadata = ctx.client_metadata();
  const auto it = metadata.find(key);
  if (it == metadata.end()) return std::nullopt;
  return absl::string_view(it->second.data(), it->second.size());
}

absl::StatusOr<coordinator::Caller> CallerOf(const grpc::ServerContextBase& ctx,
                                             const std::string& admin_token) {
  coordinator::Caller caller;
  if (std::optional<absl::string_view> token =
          MetadataValue(ctx, kJobTokenHeader)) {
    absl::Status s =
        CheckSecretText(absl::StrCat("metadata ", kJobTokenHeader), *token);
    if (!s.ok()) return s;
    caller.job_token = std::string(*token);
  }
  absl::StatusOr<bool> admin = ProvesAdmin(ctx, admin_token);
  if (!admin.ok()) return admin.status();
  caller.admin = *admin;
  return caller;
}

absl::StatusOr<std::string> CredentialOf(const grpc::ServerContextBase& ctx,
                                         const ServiceOptions& options) {
  absl::StatusOr<coordinator::Caller> caller = CallerOf(ctx, "");
  if (!caller.ok()) return caller.status();
  const std::string field = absl::StrCat("metadata ", kJobTokenHeader);
  absl::StatusOr<coordinator::TokenShare> share =
      coordinator::RulesOrStrict(options.token_rules.get())
          .ShareOf(caller->job_token, field.c_str());
  if (!share.ok()) return share.status();
  return share->share;
}

uint64_t CacheScopeOf(const std::string& credential) {
  return Fnv1a64(absl::StrCat("credential:", credential)) | 1;
}

}  // namespace reshard::server
