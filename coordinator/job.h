// One job (docs/DESIGN.md §5): its members, generation, rendezvous store and
// the run in flight. Agents join, hold a dispatch mailbox and report; RunJob
// waits until every rank is present and no other run is in flight,
// dispatches to every rank, and waits for their reports, a failure, a lost
// rank, a cancellation or its deadline. Thread-safe: one mutex guards the
// job, and every wait on it is bounded.
#ifndef RESHARD_COORDINATOR_JOB_H_
#define RESHARD_COORDINATOR_JOB_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/clock.h"
#include "coordinator/job_token.h"
#include "coordinator/limits.h"
#include "coordinator/mailbox.h"
#include "coordinator/membership.h"
#include "coordinator/rendezvous_store.h"
#include "coordinator/run_record.h"
#include "coordinator/schedule_book.h"
#include "coordinator/session_secret.h"
#include "coordinator/store_waiters.h"
#include "coordinator/work.h"
#include "run_values/rank_report.h"

namespace reshard::coordinator {

// The Coordinator's view of a job at one moment (GetJob, ListJobs).
// Which agents a JobSnapshot lists: from `first_rank` on, at most
// `max_agents` of them (a GetJob page).
struct AgentPage {
  int64_t first_rank = 0;
  int64_t max_agents = std::numeric_limits<int64_t>::max();
};

struct JobSnapshot {
  std::string name;
  int64_t world_size = 0;
  Backend backend = Backend::kGloo;
  int64_t generation = 0;
  std::string state;              // joining, ready, running
  bool open = false;              // created without a job token
  std::vector<AgentInfo> agents;  // the page's, by rank
  // The first joined rank past the page; -1 when the page lists the last.
  int64_t next_rank = -1;
  // Every joined agent, and those of them whose dispatch stream is open.
  int64_t agents_joined = 0;
  int64_t agents_connected = 0;
  std::string current_run;
  int64_t runs_total = 0;
  int64_t runs_failed = 0;
  int64_t store_keys = 0;
  int64_t store_bytes = 0;
  std::vector<RunRecord> recent_runs;  // the last kRecentRuns, oldest first
  // RunJob calls in the job: waiting for it to be ready or free, or running.
  int64_t run_calls = 0;
  // The current run's executions every rank finished, of its total, and
  // the seconds since its dispatch (zeros when none runs).
  struct Progress {
    int executions_done = 0;
    int executions_total = 0;
    double seconds = 0;
  };
  Progress current_run_progress;
  // The prepared schedules of this generation, by id.
  struct PreparedSchedule {
    std::string id;
    int64_t tensors = 0;  // 1 for one plan, else the batch's
    bool delivered = false;
  };
  std::vector<PreparedSchedule> schedules;
};

// Every rank's report of a run that ran to the end on every rank (each may
// still have failed validation).
struct RunResult {
  std::string run_id;
  std::vector<executor::RankReport> reports;  // by rank
  double wall_seconds = 0;                    // dispatch to the last report
  // Stopped by its caller (Job::Cancel with `stop`): the reports carry the
  // timings of the executions each rank finished, and no verdict.
  bool interrupted = false;
  // A run on registered tensors: every rank wrote its destinations.
  bool committed = false;
  // A run of a prepared schedule: whether its plan went to the agents.
  bool plan_sent = false;
};

// A schedule PrepareCrossMesh kept: its id and the generation it holds for.
struct PreparedSchedule {
  std::string id;
  int64_t generation = 0;
  size_t schedules = 0;  // the job's, this one included
};

// True when the caller of RunJob has gone away (its RPC was cancelled).
using CallerGone = std::function<bool()>;

struct ActiveRun;  // coordinator/active_run.h

class Job {
 public:
  // `token`: who may touch the job (coordinator/job_token.h);
  // `store_budget`: the rendezvous bytes all jobs share (null: none).
  Job(std::string name, int64_t world_size, Backend backend, JobToken token,
      const CoordinatorLimits& limits, Clock clock,
      std::shared_ptr<StoreBudget> store_budget = nullptr);
  ~Job();

  const std::string& name() const { return name_; }
  int64_t world_size() const { return world_size_; }
  Backend backend() const { return backend_; }
  const JobToken& token() const { return token_; }

  // Adds or replaces the rank's agent: the job's generation afterwards and
  // the agent's session, made by `sessions` for a new agent. The same
  // incarnation again must present its session (PERMISSION_DENIED
  // otherwise) and keeps it.
  absl::StatusOr<Joined> Join(const JoinInfo& info,
                              const SessionSource& sessions);
  // Notes that an agent for `rank` (on `host`) was refused at Join, `why`
  // (another world size or backend): a run waiting for that rank fails at
  // once instead of at its deadline, until an agent of the rank joins.
  void NoteRefusedJoin(int64_t rank, const std::string& host,
                       const std::string& why);
  // Opens the agent's dispatch mailbox (closing any older one).
  absl::StatusOr<std::shared_ptr<Mailbox>> Connect(const AgentId& id);
  // The agent's dispatch stream ended: it is no longer present.
  void Disconnect(const AgentId& id, const std::shared_ptr<Mailbox>& mailbox);
  // The agent leaves: it is no longer present, the job's generation
  // advances, and the run in flight (if any) loses the rank.
  absl::Status Leave(const AgentId& id);

  // The run's rendezvous store (coordinator/rendezvous_store.h). Every
  // call names the run it belongs to: FAILED_PRECONDITION naming `run_id`
  // when that run is not the job's current one, INVALID_ARGUMENT for a
  // rank outside the job, FAILED_PRECONDITION for a rank that has not
  // joined or an older incarnation. StoreSet is bounded by the job's key
  // and byte caps (RESOURCE_EXHAUSTED).
  absl::Status StoreSet(const AgentId& id, const std::string& run_id,
                        const std::string& key, std::string value);
  // StoreGet without holding a thread: `answer` is told every key's value
  // once all are set, the run's refusal when it ends, UNAVAILABLE when the
  // job shuts down, or what ExpireStoreWait and DropStoreWait say; exactly
  // once, never under the job's lock (it may be called before this
  // returns). A refused call returns the refusal and never calls `answer`.
  // The wait's id.
  absl::StatusOr<int64_t> AwaitStore(const AgentId& id,
                                     const std::string& run_id,
                                     std::vector<std::string> keys,
                                     StoreAnswer answer);
  // Wait `wait` reached its deadline: DEADLINE_EXCEEDED naming the keys
  // still missing. Nothing once it was answered.
  void ExpireStoreWait(int64_t wait);
  // Wait `wait`'s caller went away: CANCELLED.
  void DropStoreWait(int64_t wait);
  // AwaitStore, blocking until an answer or `deadline` (for in-process
  // callers, which have a thread to spare).
  absl::StatusOr<std::vector<std::string>> StoreGet(
      const AgentId& id, const std::string& run_id,
      const std::vector<std::string>& keys, absl::Time deadline);
  // Deletes the run's keys that start with `prefix`; how many there were.
  absl::StatusOr<int64_t> StoreDelete(const AgentId& id,
                                      const std::string& run_id,
                                      const std::string& prefix);

  // The agent's report of the current run of `generation`: refused for
  // another run or generation, or (INVALID_ARGUMENT) a report that ran but
  // has another number of tensors than the run; a repeated report changes
  // nothing.
  // Rank `id`'s run `run_id` has finished `executions_done` executions;
  // FAILED_PRECONDITION for another incarnation or a run not in flight.
  absl::Status Progress(const AgentId& id, const std::string& run_id,
                        int executions_done);
  absl::Status Report(const AgentId& id, int64_t generation,
                      const std::string& run_id, executor::RankReport report);
  // Rank `id`'s answer to the commit of run `run_id` (docs/DESIGN.md §6.6):
  // OK once its destinations are written, or why they are not.
  // FAILED_PRECONDITION naming run_id when that run is not committing; a
  // repeated answer changes nothing.
  absl::Status Committed(const AgentId& id, const std::string& run_id,
                         absl::Status result);

  // Runs `spec` on every rank (see the class comment).
  // A rank lost for `agent_wait` (CoordinatorLimits::agent_wait_seconds)
  // fails the call before its deadline.
  absl::StatusOr<RunResult> Run(std::shared_ptr<const RunSpec> spec,
                                absl::Time deadline, absl::Duration agent_wait,
                                const CallerGone& caller_gone);
  // Cancels the run in flight; its id, or "" when none was. With `stop`
  // the agents stop before their next execution and the run's RunJob
  // returns what they measured, marked interrupted, once all reported
  // (within the failure grace after the first); otherwise RunJob fails
  // CANCELLED at once.
  // A run on registered tensors that is committing is not stopped: its
  // commit completes.
  std::string Cancel(bool stop = false);

  // Keeps `spec` (a cross-mesh run) as a schedule of the job's current
  // generation (ScheduleBook::Add's refusal).
  absl::StatusOr<PreparedSchedule> Prepare(std::shared_ptr<const RunSpec> spec);
  // The run schedule `id` is (ScheduleBook::Find's refusals).
  absl::StatusOr<std::shared_ptr<const RunSpec>> Scheduled(
      const std::string& id);
  absl::Status DeleteSchedule(const std::string& id);

  // The job's state: agents (those of `page`), generation, current and
  // recent runs, store.
  JobSnapshot Info(const AgentPage& page = {}) const;
  // Closes every dispatch stream (the server is going away).
  void Shutdown(const std::string& reason);
  // No agent left and no RunJob waiting: the table may forget the job.
  bool Abandoned() const;
  // Since when no agent is connected and no run or RunJob is in it;
  // nullopt while one is.
  std::optional<absl::Time> IdleSince() const;

 private:
  struct Slot {
    bool present = false;
    AgentInfo info;
    uint64_t incarnation = 0;
    std::string session;               // the secret its agent presents
    std::shared_ptr<Mailbox> mailbox;  // while connected
    // A rank whose agent was connected and went away (its stream closed,
    // or it left): since when and how; nullopt once it is back.
    std::optional<absl::Time> lost_at;
    std::string lost_how;
    std::vector<std::string> capabilities;  // JoinInfo's
  };
  enum class WaitEnd { kDone, kDeadline, kCallerGone, kGaveUp };

  // The rank's agent: INVALID_ARGUMENT outside the job,
  // FAILED_PRECONDITION before it joined or for another incarnation,
  // PERMISSION_DENIED for another session.
  absl::Status CheckAgentLocked(const AgentId& id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Each rank's agent host, by rank ("" for a rank that never joined).
  std::vector<std::string> HostsLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The rank's slot; null when it never joined.
  const Slot* FindSlotLocked(int64_t rank) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckSessionLocked(const Slot& slot, const AgentId& id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckRunLocked(const std::string& run_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A rank left mid-run without reporting: the run fails naming it.
  void LoseRankLocked(int64_t rank, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for `done` until `deadline`, the caller's going, or (when given)
  // `give_up` saying so; both are asked every poll.
  WaitEnd AwaitLocked(const absl::Condition& done, absl::Time deadline,
                      const CallerGone& caller_gone,
                      const std::function<bool()>& give_up = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AwaitFreeLocked(absl::Time deadline, absl::Duration agent_wait,
                               const CallerGone& caller_gone)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A rank lost for `agent_wait` or longer: UNAVAILABLE naming every lost
  // rank, how and since when; OK while none has been gone that long.
  absl::Status LostRanksLocked(absl::Duration agent_wait) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Absent ranks whose agent was refused at Join: FAILED_PRECONDITION
  // naming each and why (their RankFailure kind "refused_join"); OK when
  // there are none.
  absl::Status RefusedRanksLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkLostLocked(Slot& slot, const std::string& how)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordRunLocked(const ActiveRun& run, const absl::Status& failure)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartRunLocked(std::shared_ptr<const RunSpec> spec)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  WaitEnd AwaitRunEndLocked(absl::Time deadline, const CallerGone& caller_gone)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<RunResult> FinishRunLocked(WaitEnd end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  RunResult FinishStoppedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FAILED_PRECONDITION naming the ranks whose agents cannot run `spec`
  // (a run on registered tensors needs kRegisteredTensors, a cross-mesh
  // run kCrossMesh).
  absl::Status CheckCapableLocked(const RunSpec& spec) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FAILED_PRECONDITION, its message led by `field`, naming the ranks
  // whose agents do not advertise `capability`.
  absl::Status CheckAdvertisedLocked(const char* capability,
                                     const char* field) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the run that ended moves registered tensors through staging
  // and every rank ran and validated it: then it is committed.
  bool CommitDueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends the commit to every rank and waits for their answers (or the
  // deadline, or a lost rank).
  void CommitLocked(absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Run's body, under the job's lock.
  absl::StatusOr<RunResult> RunLocked(std::shared_ptr<const RunSpec> spec,
                                      absl::Time deadline,
                                      absl::Duration agent_wait,
                                      const CallerGone& caller_gone)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers every store wait with `why(its run)`.
  void EndStoreWaitsLocked(
      const std::function<absl::Status(const std::string&)>& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Delivers the answers due_ holds; called with the lock released.
  void DeliverDue() ABSL_LOCKS_EXCLUDED(mu_);
  bool AllReportedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A run of a schedule ended, `ok` on every rank or not: after a success
  // every agent keeps its plan; after a failure it is sent again.
  void NoteScheduleRunLocked(const RunSpec& spec, bool ok)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const int64_t world_size_;
  const Backend backend_;
  const JobToken token_;
  const CoordinatorLimits& limits_;

  mutable absl::Mutex mu_;
  // The ranks that ever joined, by rank: a job's memory grows with the
  // agents in it, not with the world size it declares.
  std::map<int64_t, Slot> slots_ ABSL_GUARDED_BY(mu_);
  // By rank: the host and reason of its agent's last refused Join.
  std::map<int64_t, std::pair<std::string, std::string>> refused_joins_
      ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  RendezvousStore store_ ABSL_GUARDED_BY(mu_);
  StoreWaiters store_waits_ ABSL_GUARDED_BY(mu_);
  std::vector<DueAnswer> due_ ABSL_GUARDED_BY(mu_);  // for DeliverDue
  std::unique_ptr<ActiveRun> run_ ABSL_GUARDED_BY(mu_);
  int64_t waiters_ ABSL_GUARDED_BY(mu_) = 0;  // RunJob calls in Run()
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  int64_t runs_total_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t runs_failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<RunRecord> recent_ ABSL_GUARDED_BY(mu_);
  const Clock clock_;
  // When an agent, a run or a caller was last in the job.
  absl::Time active_at_ ABSL_GUARDED_BY(mu_);
  // The communicators' store prefix, and the generation and mesh they
  // were opened for; empty after a failed run, so the next run opens fresh
  // communicators.
  std::string comm_prefix_ ABSL_GUARDED_BY(mu_);
  int64_t comm_generation_ ABSL_GUARDED_BY(mu_) = -1;
  std::string comm_mesh_ ABSL_GUARDED_BY(mu_);
  ScheduleBook schedules_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_JOB_H_
