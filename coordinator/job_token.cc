#include "coordinator/job_token.h"

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/same_secret.h"

namespace reshard::coordinator {
namespace {

// Where a caller puts its token, for refusals.
std::string HowToPresent() {
  return absl::StrCat("gRPC metadata ", kJobTokenHeader,
                      "; agents and reshardctl: --job_token_file FILE or $",
                      kJobTokenEnv);
}

}  // namespace

absl::Status CheckOpenJobsAllowed(const Caller& caller, bool allow_open_jobs) {
  if (allow_open_jobs || !caller.job_token.empty() || caller.admin) {
    return absl::OkStatus();
  }
  return absl::UnauthenticatedError(
      absl::StrCat("this server serves only jobs with a job token "
                   "(--allow_open_jobs=false): present one (",
                   HowToPresent(), ")"));
}

bool JobToken::Matches(const std::string& presented) const {
  return SameSecret(presented, token_);
}

absl::Status JobToken::AdmitsJoin(const std::string& job,
                                  const std::string& presented) const {
  if (open() && !presented.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "job \"", job,
        "\" was created without a job token and this agent presents one: "
        "start every agent of a job with the same token"));
  }
  return Admits(job, Caller{presented, false});
}

absl::Status JobToken::Admits(const std::string& job,
                              const Caller& caller) const {
  if (open()) return absl::OkStatus();
  if (caller.job_token.empty()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "job \"", job, "\" needs its job token (", HowToPresent(), ")"));
  }
  if (!Matches(caller.job_token)) {
    return absl::PermissionDeniedError(
        absl::StrCat("job \"", job,
                     "\": the job token presented is not "
                     "the job's"));
  }
  return absl::OkStatus();
}

bool JobToken::Shows(const Caller& caller) const {
  return caller.admin || open() || Matches(caller.job_token);
}

}  // namespace reshard::coordinator
