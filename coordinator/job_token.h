// Who may touch a job (docs/DESIGN.md §5, Credentials). A job's token is
// set by the agents that create it and presented on every call that names
// the job; a job created without one is open to every caller, and only a
// server that allows open jobs creates such jobs. An admin (the planner's
// admin token) may look at every job but acts on none: running and
// cancelling take the job's token. Tokens are compared in constant time
// (common/same_secret.h) and never appear in messages.
#ifndef RESHARD_COORDINATOR_JOB_TOKEN_H_
#define RESHARD_COORDINATOR_JOB_TOKEN_H_

#include <string>
#include <utility>

#include "absl/status/status.h"

namespace reshard::coordinator {

// What a caller presents with a call.
struct Caller {
  std::string job_token;  // empty: none
  bool admin = false;     // it proved the planner's admin token
};

// UNAUTHENTICATED when a Join presents no job token on a server that does
// not allow open jobs: a Join may create a job, and a closed server creates
// none without a token, not even for the admin.
absl::Status CheckOpenJoinAllowed(const std::string& presented,
                                  bool allow_open_jobs);
// UNAUTHENTICATED for a caller that presents no job token (and is no
// admin) on a server that does not allow open jobs; checked before any
// job is looked up, so the refusal says nothing about which jobs exist.
absl::Status CheckOpenJobsAllowed(const Caller& caller, bool allow_open_jobs);

// Where a caller puts its job token, for refusals.
std::string HowToPresentJobToken();

class JobToken {
 public:
  // `token` empty: the job is open. `share`: the credential it counts in
  // (coordinator/token_rules.h).
  JobToken(std::string token, std::string share)
      : token_(std::move(token)), share_(std::move(share)) {}

  bool open() const { return token_.empty(); }

  // A Join presents exactly the job's token: none for an open job (the
  // job table brings no token holder to one), the token for a job that
  // has one. `job` names the job in the refusal.
  absl::Status AdmitsJoin(const std::string& job,
                          const std::string& presented) const;
  // Every other call that acts for or on the job: an open job admits every
  // caller without a job token (a token holder is served only by the job
  // its token names); a job with a token, only a caller that presents it.
  // Callers it does not admit are told the job is not there
  // (coordinator/coordinator.h: no existence oracle).
  bool Admits(const Caller& caller) const;
  // Views (GetJob, ListJobs): what Admits admits, and admins.
  bool Shows(const Caller& caller) const;
  // The credential whose quotas the job counts in.
  const std::string& share() const { return share_; }

 private:
  bool Matches(const std::string& presented) const;

  const std::string token_;
  const std::string share_;
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_JOB_TOKEN_H_
