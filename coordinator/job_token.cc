#include "coordinator/job_token.h"

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/same_secret.h"

namespace reshard::coordinator {
std::string HowToPresentJobToken() {
  return absl::StrCat("gRPC metadata ", kJobTokenHeader,
                      "; agents and reshardctl: --job_token_file FILE or $",
                      kJobTokenEnv);
}

absl::Status CheckOpenJoinAllowed(const std::string& presented,
                                  bool allow_open_jobs) {
  if (allow_open_jobs || !presented.empty()) return absl::OkStatus();
  return absl::UnauthenticatedError(
      absl::StrCat("this server serves only jobs with a job token "
                   "(--allow_open_jobs=false): present one (",
                   HowToPresentJobToken(), ")"));
}

absl::Status CheckOpenJobsAllowed(const Caller& caller, bool allow_open_jobs) {
  if (caller.admin) return absl::OkStatus();
  return CheckOpenJoinAllowed(caller.job_token, allow_open_jobs);
}

bool JobToken::Matches(const std::string& presented) const {
  return SameSecret(presented, token_);
}

absl::Status JobToken::AdmitsJoin(const std::string& job,
                                  const std::string& presented) const {
  // Only token-less joiners reach an open job (coordinator/job_table.h).
  if (open()) return absl::OkStatus();
  if (presented.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat("job \"", job, "\" needs its job token (",
                     HowToPresentJobToken(), ")"));
  }
  if (!Matches(presented)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "job \"", job, "\": the job token presented is not the job's"));
  }
  return absl::OkStatus();
}

bool JobToken::Admits(const Caller& caller) const {
  return open() ? caller.job_token.empty() : Matches(caller.job_token);
}

bool JobToken::Shows(const Caller& caller) const {
  return caller.admin || Admits(caller);
}

}  // namespace reshard::coordinator
