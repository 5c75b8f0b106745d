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

class JobTable {
 public:
  virtual ~JobTable() = default;
  // The job `info` joins, created with `job_token` (empty: open) when it
  // is the first agent. A job that exists checks the token first
  // (JobToken::AdmitsJoin), so a refused joiner learns nothing of it;
  // then FAILED_PRECONDITION when it has another world size or backend.
  // RESOURCE_EXHAUSTED when a new job would pass the job cap.
  virtual absl::StatusOr<std::shared_ptr<Job>> FindOrCreate(
      const JoinInfo& info, const std::string& job_token,
      const std::string& share) = 0;
  // Null when there is no such job.
  virtual std::shared_ptr<Job> Find(const std::string& name) const = 0;
  virtual std::vector<std::shared_ptr<Job>> List() const = 0;
  // Drops the job if no agent and no caller is left in it.
  virtual void ForgetIfAbandoned(const std::string& name) = 0;
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
  std::shared_ptr<Job> Find(const std::string& name) const override;
  std::vector<std::shared_ptr<Job>> List() const override;
  void ForgetIfAbandoned(const std::string& name) override;
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

  const CoordinatorLimits& limits_;
  const Clock clock_;  // each job's
  // Every job's rendezvous store bytes, shared fairly among shares.
  const std::shared_ptr<FairShares> store_bytes_;
  // The jobs held, shared fairly among shares (before jobs_, whose
  // entries give their places back).
  FairShares job_shares_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_JOB_TABLE_H_
