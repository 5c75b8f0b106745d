// The Coordinator's core (docs/DESIGN.md §5): jobs of agents, their rendezvous
// stores, dispatch and runs, with every bound of CoordinatorLimits. No
// gRPC here: server/coordinator_service.cc adapts it to reshard.v1.
// Thread-safe; every blocking call is bounded by the deadline it is given.
#ifndef RESHARD_COORDINATOR_COORDINATOR_H_
#define RESHARD_COORDINATOR_COORDINATOR_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/fair_shares.h"
#include "coordinator/clock.h"
#include "coordinator/job.h"
#include "coordinator/job_table.h"
#include "coordinator/job_token.h"
#include "coordinator/limits.h"
#include "coordinator/mailbox.h"
#include "coordinator/membership.h"
#include "coordinator/session_secret.h"
#include "coordinator/token_rules.h"
#include "coordinator/work.h"
#include "run_values/run_summary.h"

namespace reshard::coordinator {

// A run every rank ran: the aggregated table and every rank's report.
struct RunOutcome {
  std::string run_id;
  Backend backend = Backend::kGloo;  // the job's
  executor::RunSummary summary;
  std::vector<executor::RankReport> reports;  // by rank
  // Stopped by its caller (CancelJob with `stop`): the summary holds the
  // timings of the executions every rank finished, and no verdict.
  bool interrupted = false;
  // A run on registered tensors whose every rank wrote its destinations.
  bool committed = false;
  // A run of a prepared schedule: whether its plan went to the agents.
  bool plan_sent = false;
};

class Coordinator {
 public:
  // `clock` keeps the books (coordinator/clock.h); `table` holds the jobs;
  // `sessions` makes joining agents' sessions (tests give their own).
  explicit Coordinator(CoordinatorLimits limits, Clock clock = SystemClock(),
                       SessionSource sessions = RandomSessions());
  Coordinator(CoordinatorLimits limits, Clock clock,
              std::unique_ptr<JobTable> table,
              SessionSource sessions = RandomSessions());

  // Every call that names a job takes its `caller`'s credentials
  // (coordinator/job_token.h) and checks the name (INVALID_ARGUMENT, the
  // value escaped and cut): without a job token on a server that does not
  // allow open jobs, UNAUTHENTICATED before any lookup. A job the caller
  // does not hold answers as a missing one does, with one code and one
  // message (NOT_FOUND), so that no caller learns which jobs exist; only
  // Join, which creates a missing job, refuses a held name with
  // UNAUTHENTICATED or PERMISSION_DENIED.

  // Refuses another protocol (FAILED_PRECONDITION naming both versions),
  // bad fields (INVALID_ARGUMENT naming them), a token not the job's and
  // a job that exists with another shape; creates the job with the
  // caller's token when it is the first agent; returns the job's
  // generation and the agent's session (Job::Join).
  absl::StatusOr<Joined> Join(const JoinInfo& info, const Caller& caller = {});

  // The calls below name an agent that joined. Each finds the agent's job
  // (NOT_FOUND naming `agent.job` when there is none) and hands the call
  // to it (coordinator/job.h): INVALID_ARGUMENT for a rank outside the
  // job, FAILED_PRECONDITION for a rank that has not joined or an older
  // incarnation, PERMISSION_DENIED for a session not the rank's.

  // Opens the agent's dispatch mailbox, closing an older one.
  absl::StatusOr<std::shared_ptr<Mailbox>> Connect(const AgentId& id,
                                                   const Caller& caller = {});
  // The agent's dispatch stream ended: it is no longer present.
  void Disconnect(const AgentId& id, const std::shared_ptr<Mailbox>& mailbox);
  // The agent leaves its job; a job left by its last agent is forgotten.
  absl::Status Leave(const AgentId& id, const Caller& caller = {});

  // The agent's job, for the calls an agent makes within its run (the
  // rendezvous store and reports: coordinator/job.h); NOT_FOUND naming
  // `agent.job` when there is none.
  absl::StatusOr<std::shared_ptr<Job>> JobOf(const AgentId& id,
                                             const Caller& caller = {}) const;

  // A waiting StoreGet of the agent's run (Job::AwaitStore), counted
  // against --max_store_waiters_per_credential for its job's share and
  // --max_store_waiters in all: past either it is refused at once with
  // RESOURCE_EXHAUSTED naming the flag. Whoever holds the wait ends it at
  // its deadline (Expire) or when its caller goes (Drop).
  class StoreWait {
   public:
    StoreWait(std::weak_ptr<Job> job, int64_t id)
        : job_(std::move(job)), id_(id) {}
    void Expire() const {
      if (std::shared_ptr<Job> job = job_.lock()) job->ExpireStoreWait(id_);
    }
    void Drop() const {
      if (std::shared_ptr<Job> job = job_.lock()) job->DropStoreWait(id_);
    }

   private:
    std::weak_ptr<Job> job_;
    int64_t id_;
  };
  absl::StatusOr<StoreWait> AwaitStore(const AgentId& id,
                                       const std::string& run_id,
                                       std::vector<std::string> keys,
                                       StoreAnswer answer,
                                       const Caller& caller = {});

  // Runs `spec` on job `job` (NOT_FOUND when no agent has created it):
  // checks the spec against the job, waits for the job until `deadline`,
  // runs and aggregates. A run that failed on a rank is an error naming
  // the run, the ranks and their steps; one that ran but did not validate
  // is an outcome with summary.validated false.
  absl::StatusOr<RunOutcome> RunJob(const std::string& job,
                                    std::shared_ptr<const RunSpec> spec,
                                    absl::Time deadline,
                                    const CallerGone& caller_gone,
                                    const Caller& caller = {});
  // PrepareCrossMesh: keeps `spec`, a cross-mesh run planned for job
  // `job`, as a schedule of the job's current generation (RunJob's
  // refusals of the job and the spec; Job::Prepare's).
  absl::StatusOr<PreparedSchedule> PrepareSchedule(
      const std::string& job, std::shared_ptr<const RunSpec> spec,
      const Caller& caller = {});
  // The run schedule `id` of job `job` is (Job::Scheduled's refusals).
  absl::StatusOr<std::shared_ptr<const RunSpec>> Scheduled(
      const std::string& job, const std::string& id, const Caller& caller = {});
  absl::Status DeleteSchedule(const std::string& job, const std::string& id,
                              const Caller& caller = {});
  // RunJob's check before it plans: the refusal RunJob would give
  // `caller` for its credentials; OK when there is no job `job` (RunJob
  // then answers NOT_FOUND).
  absl::Status CheckActor(const std::string& job, const Caller& caller) const;
  // The state of the jobs the caller may see (JobToken::Shows), by name:
  // from the first named `from` or after on, at most `max_jobs`, each
  // with the agents of `agents`. One job's (NOT_FOUND when unknown), with
  // the agents of `agents`.
  std::vector<JobSnapshot> ListJobs(
      const Caller& caller, const std::string& from = "",
      size_t max_jobs = std::numeric_limits<size_t>::max(),
      const AgentPage& agents = {}) const;
  // Every job without its agents' list (their counts only), for the
  // server's own readings (metrics); no caller's view.
  std::vector<JobSnapshot> AllJobs() const;
  absl::StatusOr<JobSnapshot> GetJob(const std::string& job,
                                     const Caller& caller = {},
                                     const AgentPage& agents = {}) const;
  // The cancelled run's id ("" when none was running).
  // Job::Cancel: `stop` returns the run's partial results to its caller.
  absl::StatusOr<std::string> CancelJob(const std::string& job,
                                        bool stop = false,
                                        const Caller& caller = {});

  // Closes every dispatch stream and refuses new work.
  void Shutdown(const std::string& reason);
  // Whether new work would be taken: false once shut down, and while the
  // job cap or the RunJob cap is reached (a new job's Join, or another
  // RunJob, would be RESOURCE_EXHAUSTED). The health service reports it
  // as reshard.v1.Coordinator.
  bool Admitting() const;
  // Which job tokens it accepts (CoordinatorLimits::token_rules).
  const TokenRules& token_rules() const { return *token_rules_; }

 private:
  // How a call reaches a job: as one of its agents (the job named by
  // agent.job), or by name to act on it (RunJob, CancelJob) or to look.
  enum class Access { kAgent, kAct, kView };
  // Job `job` when `caller` may reach it so; NOT_FOUND naming the field
  // (agent.job or job) when there is none or the caller does not hold it,
  // PERMISSION_DENIED for an admin acting on a job with a token.
  absl::StatusOr<std::shared_ptr<Job>> AdmittedJob(const std::string& job,
                                                   const Caller& caller,
                                                   Access access) const;
  // Drops the jobs idle for limits_.job_idle_seconds (docs/DESIGN.md §5: a job
  // whose agents died without leaving). Done on the calls that look jobs
  // up by name, so no thread is needed.
  void DropIdleJobs() const;

  const CoordinatorLimits limits_;
  const Clock clock_;
  const SessionSource sessions_;
  // RunJob calls waiting or running, and StoreGets waiting, shared fairly
  // (common/fair_shares.h). Before the table: a job answers the
  // waits it still holds when it goes, and they give their slots back.
  FairShares runs_;
  FairShares store_waiters_;
  std::unique_ptr<JobTable> table_;
  const TokenRules* const token_rules_;  // RulesOrStrict(limits_'s)
  std::atomic<bool> shut_down_{false};
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_COORDINATOR_H_
