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
        store_budget_(std::make_shared<StoreBudget>(
            limits.max_store_bytes_total, "the rendezvous stores of all jobs",
            "--max_store_bytes_total")) {}

  absl::StatusOr<std::shared_ptr<Job>> FindOrCreate(
      const JoinInfo& info, const std::string& job_token,
      const std::string& share) override;
  std::shared_ptr<Job> Find(const std::string& name) const override;
  std::vector<std::shared_ptr<Job>> List() const override;
  void ForgetIfAbandoned(const std::string& name) override;
  void DropIdle(absl::Time before) override;

 private:
  // How many jobs count in `share`.
  int64_t JobsOfShareLocked(const std::string& share) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The store budget of `share`'s jobs, made when its first job is.
  std::shared_ptr<StoreBudget> ShareBudgetLocked(const std::string& share)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CoordinatorLimits& limits_;
  const Clock clock_;  // each job's
  // Shared by every job's rendezvous store.
  const std::shared_ptr<StoreBudget> store_budget_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  // Held by the jobs of each share; an entry outlives them harmlessly.
  std::map<std::string, std::weak_ptr<StoreBudget>> share_budgets_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_JOB_TABLE_H_
