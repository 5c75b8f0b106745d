#include "coordinator/token_rules.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace reshard::coordinator {
namespace {

std::string HowToGetOne() {
  return "the admin issues job tokens with: reshardctl job token NAME "
         "--admin_token_file FILE";
}

}  // namespace

const TokenRules& RulesOrStrict(const TokenRules* rules) {
  static const TokenRules* const strict = new TokenRules(std::nullopt, false);
  return rules != nullptr ? *rules : *strict;
}

std::string IssuedShare(const std::string& job) {
  return absl::StrCat("job:", job);
}

std::string DescribeShare(const std::string& share) {
  if (share.empty()) return "the share of callers without a job token";
  if (share == kLegacyShare) {
    return "the share of self-chosen job tokens (--legacy_job_tokens)";
  }
  return "the share of this job token";
}

absl::StatusOr<TokenShare> TokenRules::ShareOf(const std::string& token,
                                               const char* field) const {
  if (token.empty()) return TokenShare{};
  if (key_.has_value() && IsIssuedForm(token)) {
    absl::StatusOr<std::string> job = key_->Verify(token);
    if (!job.ok()) {
      return absl::PermissionDeniedError(
          absl::StrCat(field, ": ", job.status().message()));
    }
    return TokenShare{IssuedShare(*job), *job};
  }
  if (legacy_) {
    legacy_accepted_.fetch_add(1);
    return TokenShare{kLegacyShare, ""};
  }
  if (!key_.has_value()) {
    return absl::PermissionDeniedError(absl::StrCat(
        field,
        ": this planner issues no job tokens (it has no --admin_token_file) "
        "and accepts no self-chosen ones (--legacy_job_tokens)"));
  }
  return absl::PermissionDeniedError(
      absl::StrCat(field, ": the job token was not issued by this planner (",
                   HowToGetOne(), ")"));
}

absl::StatusOr<TokenShare> TokenRules::ShareForJoin(
    const std::string& job, const std::string& token) const {
  absl::StatusOr<TokenShare> share = ShareOf(token, "agent.job");
  if (!share.ok() || share->issued_for.empty() || share->issued_for == job) {
    return share;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "agent.job: the job token was issued for job \"", share->issued_for,
      "\", not \"", job, "\" (", HowToGetOne(), ")"));
}

}  // namespace reshard::coordinator
