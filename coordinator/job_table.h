// Where jobs live. The Coordinator reaches job state only through this small
// interface so that a replicated store can replace the in-memory one later
// (docs/DESIGN.md §5: today, state lives in the serving replica).
#ifndef RESHARD_COORDINATOR_JOB_TABLE_H_
#define RESHARD_COORDINATOR_JOB_TABLE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/fair_shares.h"
#include "coordinator/clock.h"
#include "coordinator/job.h"
#include "coordinator/limits.h"
#include "coordinator/membership.h"
#include "coordinator/store_budget.h"

namespace reshard::coordinator {

// Open jobs and jobs with a token live in two name spaces (docs/DESIGN.md
// §5, Credentials): a token holder's calls reach only jobs with a token,
// so an open job never holds a name against the name's token.
enum class JobSpace { kOpen, kTokened };
inline JobSpace SpaceOf(const std::string& job_token) {
  return job_token.empty() ? JobSpace::kOpen : JobSpace::kTokened;
}
inline JobSpace SpaceOf(const JobToken& token) {
  return token.open() ? JobSpace::kOpen : JobSpace::kTokened;
}

class JobTable {
 public:
  virtual ~JobTable() = default;
  // The job `info` joins in the space of `job_token` (empty: open),
  // created with that token when it is the first agent. A token-less
  // joiner of a name that a job with a token holds is refused
  // (UNAUTHENTICATED): that name is the token's. A job that exists checks
  // the token first (JobToken::AdmitsJoin), so a refused joiner learns
  // nothing of it; then FAILED_PRECONDITION when it has another world size
  // or backend. RESOURCE_EXHAUSTED when a new job would pass the job cap.
  virtual absl::StatusOr<std::shared_ptr<Job>> FindOrCreate(
      const JoinInfo& info, const std::string& job_token,
      const std::string& share) = 0;
  // Null when there is no such job in `space`.
  virtual std::shared_ptr<Job> Find(const std::string& name,
                                    JobSpace space) const = 0;
  virtual std::vector<std::shared_ptr<Job>> List() const = 0;
  // Drops the job if no agent and no caller is left in it.
  virtual void ForgetIfAbandoned(const std::string& name, JobSpace space) = 0;
  // Drops every job idle (Job::IdleSince) since `before` or earlier.
  virtual void DropIdle(absl::Time before) = 0;
};

class InMemoryJobTable final : public JobTable {
 public:
  InMemoryJobTable(const CoordinatorLimits& limits, Clock clock)
      : limits_(limits),
        clock_(std::move(clock)),
        store_bytes_(
            std::make_shared<FairShares>(limits.max_store_bytes_total, clock_)),
        job_shares_(limits.max_jobs, clock_) {}

  absl::StatusOr<std::shared_ptr<Job>> FindOrCreate(
      const JoinInfo& info, const std::string& job_token,
      const std::string& share) override;
  std::shared_ptr<Job> Find(const std::string& name,
                            JobSpace space) const override;
  std::vector<std::shared_ptr<Job>> List() const override;
  void ForgetIfAbandoned(const std::string& name, JobSpace space) override;
  void DropIdle(absl::Time before) override;

 private:
  // A job and the place it holds among its share's jobs.
  struct Entry {
    std::shared_ptr<Job> job;
    FairShares::Hold hold;
  };

  // A new job `info` names, if its share may hold one more.
  absl::StatusOr<std::shared_ptr<Job>> CreateLocked(
      const JoinInfo& info, const std::string& job_token,
      const std::string& share) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<Job> FindLocked(const std::string& name, JobSpace space) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::map<std::string, Entry>& Space(JobSpace space)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return space == JobSpace::kOpen ? open_jobs_ : tokened_jobs_;
  }
  const std::map<std::string, Entry>& Space(JobSpace space) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return space == JobSpace::kOpen ? open_jobs_ : tokened_jobs_;
  }

  const CoordinatorLimits& limits_;
  const Clock clock_;  // each job's
  // Every job's rendezvous store bytes, shared fairly among shares.
  const std::shared_ptr<FairShares> store_bytes_;
  // The jobs held, shared fairly among shares (before jobs_, whose
  // entries give their places back).
  FairShares job_shares_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> open_jobs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Entry> tokened_jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_JOB_TABLE_H_
