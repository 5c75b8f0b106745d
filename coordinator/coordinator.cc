#include "coordinator/coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/echoed_text.h"
#include "common/job_name.h"
#include "common/version.h"
#include "planner/core/plan_structure.h"

namespace reshard::coordinator {
namespace {

// A Join's description of its agent: printable, and short enough that
// every rank's fits in a GetJob page.
absl::Status CheckAgentText(const std::string& text, int64_t max_bytes,
                            const char* field) {
  if (static_cast<int64_t>(text.size()) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", text.size(), " bytes, at most ", max_bytes));
  }
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", EchoedValue(text),
                       " holds a byte outside printable "
                       "ASCII"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckJoin(const JoinInfo& info, const CoordinatorLimits& limits) {
  if (info.protocol != kCoordinatorProtocol) {
    return absl::FailedPreconditionError(absl::StrCat(
        "agent version ",
        info.version.empty() ? "unknown"
                             : EscapedText(info.version, kMaxEchoedValueBytes),
        " (protocol ", info.protocol,
        ") is incompatible with this "
        "coordinator, version ",
        kReshardVersion, " (protocol ", kCoordinatorProtocol,
        "); run agents of a matching version"));
  }
  absl::Status s =
      CheckJobName(info.agent.job, limits.max_job_name_bytes, "agent.job");
  if (s.ok()) s = CheckAgentText(info.host, limits.max_host_bytes, "host");
  if (s.ok()) {
    s = CheckAgentText(info.version, limits.max_version_bytes, "version");
  }
  if (!s.ok()) return s;
  if (info.world_size < 1 || info.world_size > limits.max_world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("world_size: ", info.world_size, " is outside [1, ",
                     limits.max_world_size, "]"));
  }
  if (info.agent.rank < 0 || info.agent.rank >= info.world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent.rank: ", info.agent.rank, " is outside [0, ",
                     info.world_size, ")"));
  }
  return absl::OkStatus();
}

// The one answer for a job the caller does not hold, whether it exists or
// not: nothing in it depends on the job table.
absl::Status NoJobForCaller(const std::string& name, const char* field,
                            const char* hint) {
  return absl::NotFoundError(absl::StrCat(
      field, ": no job \"", name, "\" for this caller (", hint,
      "; a job created with a job token is found only with that token: ",
      HowToPresentJobToken(), ")"));
}

// A cross-mesh run's ranks, the union of every rank map, must be the
// job's: every agent of the job takes part in the run's communicator.
absl::Status CheckCrossRanks(const RunSpec& spec, const Job& job) {
  const std::vector<int64_t> ranks =
      spec.cross.has_value() ? spec.cross->Ranks()
                             : executor::CrossBatchRanks(spec.cross_batch);
  if (static_cast<int64_t>(ranks.size()) != job.world_size() ||
      ranks.back() != job.world_size() - 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.cross_batch.empty() ? "cross: the two meshes' rank maps hold "
                                 : "cross_batch: the tensors' rank maps hold ",
        ranks.size(), " ranks up to ", ranks.back(), "; job \"", job.name(),
        "\"'s are 0 to ", job.world_size() - 1, ", each in one mesh or both"));
  }
  return absl::OkStatus();
}

// What a run asks of the ranks must fit the job and the executor.
absl::Status CheckSpec(const RunSpec& spec, const Job& job) {
  if (spec.is_cross()) {
    absl::Status s = CheckCrossRanks(spec, job);
    if (!s.ok()) return s;
  }
  if (spec.mesh.world_size() != job.world_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mesh: world size ", spec.mesh.world_size(), " differs from job \"",
        job.name(), "\"'s world size ", job.world_size()));
  }
  for (int64_t p = 0; p < spec.mesh.world_size(); ++p) {
    const int64_t rank = spec.mesh.RankAt(p);
    if (rank < 0 || rank >= job.world_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh.ranks: rank ", rank, " is not a rank of job \"",
                       job.name(), "\" (0 to ", job.world_size() - 1, ")"));
    }
  }
  if (spec.iters < 1 || spec.iters > 100000) {
    return absl::InvalidArgumentError(
        absl::StrCat("iters: ", spec.iters, " is outside [1, 100000]"));
  }
  if (spec.warmup < 0 || spec.warmup > 100000) {
    return absl::InvalidArgumentError(
        absl::StrCat("warmup: ", spec.warmup, " is outside [0, 100000]"));
  }
  if (!(spec.timeout_seconds > 0 && spec.timeout_seconds <= 86400)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timeout_seconds: ", spec.timeout_seconds, " is outside (0, 86400]"));
  }
  if (!(spec.agent_wait_seconds >= 0 && spec.agent_wait_seconds <= 86400)) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent_wait_seconds: ", spec.agent_wait_seconds,
                     " is outside [0, 86400] (0: the server's)"));
  }
  if (spec.is_cross()) return absl::OkStatus();
  const executor::BatchWork& work = spec.work;
  if (work.plans.empty()) {
    return absl::InvalidArgumentError("work: no plans to run");
  }
  if (work.names.size() != work.plans.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("names: ", work.names.size(), " names for ",
                     work.plans.size(), " plans"));
  }
  for (size_t i = 0; i < work.plans.size(); ++i) {
    absl::Status s = CheckPlanStructure(spec.mesh, work.plans[i]);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          work.single_plan ? "plan." : absl::StrCat("batch.plans[", i, "]."),
          s.message()));
    }
  }
  return absl::OkStatus();
}

RunOutcome OutcomeOf(const RunSpec& spec, Backend backend, RunResult result) {
  RunOutcome outcome{result.run_id, backend, {}, std::move(result.reports)};
  if (!spec.cross_batch.empty()) {
    outcome.summary =
        executor::SummarizeCrossBatch(spec.cross_batch, outcome.reports);
    for (size_t t = 0; t < spec.cross_names.size(); ++t) {
      outcome.summary.tensors[t].name = spec.cross_names[t];
    }
  } else {
    outcome.summary =
        spec.cross.has_value()
            ? executor::SummarizeCross(*spec.cross, outcome.reports)
            : executor::Summarize(spec.mesh, spec.work, outcome.reports);
  }
  outcome.summary.wall_seconds = result.wall_seconds;
  outcome.interrupted = result.interrupted;
  outcome.committed = result.committed;
  outcome.plan_sent = result.plan_sent;
  return outcome;
}

absl::Status SlotRefusal(const FairShares::Refusal& refusal,
                         const std::string& share, const FairShareCaps& caps) {
  return absl::ResourceExhaustedError(
      FairShareRefusalText(refusal, DescribeShare(share), caps));
}

}  // namespace

Coordinator::Coordinator(CoordinatorLimits limits, Clock clock,
                         SessionSource sessions)
    : Coordinator(limits, std::move(clock), nullptr, std::move(sessions)) {}

Coordinator::Coordinator(CoordinatorLimits limits, Clock clock,
                         std::unique_ptr<JobTable> table,
                         SessionSource sessions)
    : limits_(limits),
      clock_(std::move(clock)),
      sessions_(std::move(sessions)),
      runs_(limits_.max_concurrent_runs, clock_),
      store_waiters_(limits_.max_store_waiters, clock_),
      table_(std::move(table)),
      token_rules_(&RulesOrStrict(limits_.token_rules)) {
  // The in-memory table keeps references to this Coordinator's limits and
  // clock, so it is made once they are members.
  if (table_ == nullptr) {
    table_ = std::make_unique<InMemoryJobTable>(limits_, clock_);
  }
}

absl::StatusOr<Joined> Coordinator::Join(const JoinInfo& info,
                                         const Caller& caller) {
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  absl::Status s = CheckJoin(info, limits_);
  if (!s.ok()) return s;
  s = CheckOpenJoinAllowed(caller.job_token, limits_.allow_open_jobs);
  if (!s.ok()) return s;
  // Before any lookup: a token not issued for this name is refused the
  // same whether the job exists or not.
  absl::StatusOr<TokenShare> share =
      token_rules_->ShareForJoin(info.agent.job, caller.job_token);
  if (!share.ok()) return share.status();
  DropIdleJobs();
  absl::StatusOr<std::shared_ptr<Job>> job =
      table_->FindOrCreate(info, caller.job_token, share->share);
  if (!job.ok()) return job.status();
  return (*job)->Join(info, sessions_);
}

absl::StatusOr<std::shared_ptr<Job>> Coordinator::AdmittedJob(
    const std::string& name, const Caller& caller, Access access) const {
  const bool agent = access == Access::kAgent;
  const char* field = agent ? "agent.job" : "job";
  absl::Status s = CheckJobName(name, limits_.max_job_name_bytes, field);
  if (!s.ok()) return s;
  s = CheckOpenJobsAllowed(caller, limits_.allow_open_jobs);
  if (!s.ok()) return s;
  if (!agent) DropIdleJobs();
  std::shared_ptr<Job> job = table_->Find(name, SpaceOf(caller.job_token));
  // An admin without a job token also sees the name's job with a token.
  if (job == nullptr && caller.admin && caller.job_token.empty()) {
    job = table_->Find(name, JobSpace::kTokened);
  }
  if (job == nullptr || !job->token().Shows(caller)) {
    return NoJobForCaller(name, field,
                          agent ? "join before anything else"
                                : "a job exists once its first agent joins");
  }
  if (access == Access::kView || job->token().Admits(caller)) return job;
  // Only an admin sees a job it may not act on, and it sees every job.
  return absl::PermissionDeniedError(absl::StrCat(
      field, ": job \"", name,
      "\": the admin token shows jobs; running, cancelling and agent calls "
      "take the job's token"));
}

absl::StatusOr<std::shared_ptr<Job>> Coordinator::JobOf(
    const AgentId& id, const Caller& caller) const {
  return AdmittedJob(id.job, caller, Access::kAgent);
}

void Coordinator::DropIdleJobs() const {
  table_->DropIdle(clock_() - absl::Seconds(limits_.job_idle_seconds));
}

absl::StatusOr<std::shared_ptr<Mailbox>> Coordinator::Connect(
    const AgentId& id, const Caller& caller) {
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  absl::StatusOr<std::shared_ptr<Job>> job = JobOf(id, caller);
  if (!job.ok()) return job.status();
  return (*job)->Connect(id);
}

void Coordinator::Disconnect(const AgentId& id,
                             const std::shared_ptr<Mailbox>& mailbox) {
  // The mailbox is one job's: the other space's job of the name ignores it.
  for (JobSpace space : {JobSpace::kOpen, JobSpace::kTokened}) {
    if (std::shared_ptr<Job> job = table_->Find(id.job, space)) {
      job->Disconnect(id, mailbox);
    }
  }
}

absl::Status Coordinator::Leave(const AgentId& id, const Caller& caller) {
  absl::StatusOr<std::shared_ptr<Job>> job = JobOf(id, caller);
  if (!job.ok()) return job.status();
  absl::Status s = (*job)->Leave(id);
  table_->ForgetIfAbandoned(id.job, SpaceOf((*job)->token()));
  return s;
}

absl::StatusOr<Coordinator::StoreWait> Coordinator::AwaitStore(
    const AgentId& id, const std::string& run_id, std::vector<std::string> keys,
    StoreAnswer answer, const Caller& caller) {
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  absl::StatusOr<std::shared_ptr<Job>> job = JobOf(id, caller);
  if (!job.ok()) return job.status();
  const std::string& share = (*job)->token().share();
  FairShares::Refusal refusal;
  std::optional<FairShares::Hold> slot = store_waiters_.TryHold(
      share, 1, limits_.max_store_waiters_per_credential, &refusal);
  if (!slot.has_value()) {
    return SlotRefusal(
        refusal, share,
        {"waiting StoreGet calls", limits_.max_store_waiters_per_credential,
         "--max_store_waiters_per_credential", limits_.max_store_waiters,
         "--max_store_waiters"});
  }
  absl::StatusOr<int64_t> wait = (*job)->AwaitStore(
      id, run_id, std::move(keys),
      [slot = std::move(slot), answer = std::move(answer)](
          absl::StatusOr<std::vector<std::string>> values) mutable {
        slot.reset();  // given back before the caller learns the answer
        std::move(answer)(std::move(values));
      });
  if (!wait.ok()) return wait.status();
  return StoreWait(*job, *wait);
}

absl::StatusOr<RunOutcome> Coordinator::RunJob(
    const std::string& name, std::shared_ptr<const RunSpec> spec,
    absl::Time deadline, const CallerGone& caller_gone, const Caller& caller) {
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  absl::StatusOr<std::shared_ptr<Job>> job =
      AdmittedJob(name, caller, Access::kAct);
  if (!job.ok()) return job.status();
  const std::string& share = (*job)->token().share();
  FairShares::Refusal refusal;
  std::optional<FairShares::Hold> slot =
      runs_.TryHold(share, 1, limits_.max_runs_per_credential, &refusal);
  if (!slot.has_value()) {
    return SlotRefusal(
        refusal, share,
        {"concurrent RunJob calls", limits_.max_runs_per_credential,
         "--max_runs_per_credential", limits_.max_concurrent_runs,
         "--max_concurrent_runs"});
  }
  absl::Status s = CheckSpec(*spec, **job);
  if (!s.ok()) return s;
  std::shared_ptr<const RunSpec> kept = spec;
  const double wait = spec->agent_wait_seconds > 0 ? spec->agent_wait_seconds
                                                   : limits_.agent_wait_seconds;
  absl::StatusOr<RunResult> result =
      (*job)->Run(std::move(spec), deadline, absl::Seconds(wait), caller_gone);
  if (!result.ok()) return result.status();
  return OutcomeOf(*kept, (*job)->backend(), *std::move(result));
}

absl::StatusOr<PreparedSchedule> Coordinator::PrepareSchedule(
    const std::string& name, std::shared_ptr<const RunSpec> spec,
    const Caller& caller) {
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  absl::StatusOr<std::shared_ptr<Job>> job =
      AdmittedJob(name, caller, Access::kAct);
  if (!job.ok()) return job.status();
  absl::Status s = CheckSpec(*spec, **job);
  if (!s.ok()) return s;
  return (*job)->Prepare(std::move(spec));
}

absl::StatusOr<std::shared_ptr<const RunSpec>> Coordinator::Scheduled(
    const std::string& name, const std::string& id, const Caller& caller) {
  absl::StatusOr<std::shared_ptr<Job>> job =
      AdmittedJob(name, caller, Access::kAct);
  if (!job.ok()) return job.status();
  return (*job)->Scheduled(id);
}

absl::Status Coordinator::DeleteSchedule(const std::string& name,
                                         const std::string& id,
                                         const Caller& caller) {
  absl::StatusOr<std::shared_ptr<Job>> job =
      AdmittedJob(name, caller, Access::kAct);
  if (!job.ok()) return job.status();
  return (*job)->DeleteSchedule(id);
}

absl::Status Coordinator::CheckActor(const std::string& name,
                                     const Caller& caller) const {
  absl::StatusOr<std::shared_ptr<Job>> job =
      AdmittedJob(name, caller, Access::kAct);
  if (job.ok() || absl::IsNotFound(job.status())) return absl::OkStatus();
  return job.status();
}

std::vector<JobSnapshot> Coordinator::ListJobs(const Caller& caller,
                                               const std::string& from,
                                               size_t max_jobs,
                                               const AgentPage& agents) const {
  DropIdleJobs();
  std::vector<std::shared_ptr<Job>> shown;
  for (std::shared_ptr<Job>& job : table_->List()) {
    if (job->name() >= from && job->token().Shows(caller)) {
      shown.push_back(std::move(job));
    }
  }
  // By name; an open job before the job with a token of the same name.
  std::sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) {
    return std::pair(a->name(), !a->token().open()) <
           std::pair(b->name(), !b->token().open());
  });
  if (shown.size() > max_jobs) shown.resize(max_jobs);
  std::vector<JobSnapshot> jobs;
  for (const std::shared_ptr<Job>& job : shown) {
    jobs.push_back(job->Info(agents));
  }
  return jobs;
}

std::vector<JobSnapshot> Coordinator::AllJobs() const {
  return ListJobs(Caller{"", true}, "", std::numeric_limits<size_t>::max(),
                  AgentPage{0, 0});
}

absl::StatusOr<JobSnapshot> Coordinator::GetJob(const std::string& name,
                                                const Caller& caller,
                                                const AgentPage& agents) const {
  absl::StatusOr<std::shared_ptr<Job>> job =
      AdmittedJob(name, caller, Access::kView);
  if (!job.ok()) return job.status();
  return (*job)->Info(agents);
}

absl::StatusOr<std::string> Coordinator::CancelJob(const std::string& name,
                                                   bool stop,
                                                   const Caller& caller) {
  absl::StatusOr<std::shared_ptr<Job>> job =
      AdmittedJob(name, caller, Access::kAct);
  if (!job.ok()) return job.status();
  return (*job)->Cancel(stop);
}

bool Coordinator::Admitting() const {
  return !shut_down_ && runs_.total() < limits_.max_concurrent_runs &&
         static_cast<int64_t>(table_->List().size()) < limits_.max_jobs;
}

void Coordinator::Shutdown(const std::string& reason) {
  shut_down_ = true;
  for (const std::shared_ptr<Job>& job : table_->List()) job->Shutdown(reason);
}

}  // namespace reshard::coordinator
