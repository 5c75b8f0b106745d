// A job's run, from RunJob's admission to its outcome: wait until every
// rank is present and the job is free, dispatch, collect reports, and end
// the run (its rendezvous keys deleted, stragglers told to cancel).
#include <atomic>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/error_kind.h"
#include "common/run_failure.h"
#include "coordinator/active_run.h"
#include "coordinator/job.h"
#include "run_values/batch_work.h"

namespace reshard::coordinator {
namespace {

// How often a wait looks at whether its caller went away.
constexpr absl::Duration kCallerPoll = absl::Milliseconds(100);
// A caller gone this close to the call's deadline went at its deadline.
constexpr absl::Duration kDeadlineSlack = absl::Milliseconds(500);
// After a first failure, how long the run waits for the other ranks to
// settle, so that a rank that died (its stream dropped) is named ahead of
// the peers that only saw it go.
constexpr absl::Duration kFailureGrace = absl::Seconds(2);

// Unique within this process and, by the random prefix, across restarts.
std::string NewRunId() {
  static const uint32_t prefix = std::random_device()();
  static std::atomic<uint64_t> counter{0};
  return absl::StrFormat("%08x-%d", prefix, ++counter);
}

// Whether a rank reported that its registered tensors were refused: then
// every rank saw the refusal in pre-flight (docs/DESIGN.md §6.4) and none
// entered a data collective.
bool BindingRefused(const ActiveRun& run) {
  for (const std::optional<executor::RankReport>& report : run.reports) {
    if (report.has_value() && !report->status.ok() &&
        ErrorKindOf(report->status) == ErrorKind::kBinding) {
      return true;
    }
  }
  return false;
}

// A refusal in pre-flight that every rank reported: each kept its
// communicators, so the next run may reuse them.
bool RefusedInPreflight(const ActiveRun& run) {
  if (!run.Complete() || run.cancelled) return false;
  for (const std::string& lost : run.lost) {
    if (!lost.empty()) return false;
  }
  return BindingRefused(run);
}

// Why a run that ended did not succeed, each rank that failed named
// (common/run_failure.h) with its host (`hosts`, by rank); OK when every
// rank ran it. A run refused in pre-flight fails with the refusing ranks'
// own codes and messages only: their peers merely saw the refusal.
absl::Status RunFailure(const ActiveRun& run, bool deadline_hit,
                        const std::vector<std::string>& hosts) {
  std::vector<RankFailure> lost, silent, failed;
  absl::StatusCode failed_code = absl::StatusCode::kOk;
  const bool refused = BindingRefused(run);
  for (size_t r = 0; r < run.reports.size(); ++r) {
    const auto rank = static_cast<int64_t>(r);
    if (!run.lost[r].empty()) {
      lost.push_back({rank, hosts[r], "lost", run.lost[r]});
    } else if (!run.reports[r].has_value()) {
      if (deadline_hit) {
        silent.push_back(
            {rank, hosts[r], "no_report", "no report by the deadline"});
      }
    } else if (const absl::Status& s = run.reports[r]->status;
               !s.ok() && (!refused || ErrorKindOf(s) == ErrorKind::kBinding)) {
      if (failed_code == absl::StatusCode::kOk) failed_code = s.code();
      failed.push_back({rank, hosts[r],
                        std::string(ErrorKindName(ErrorKindOf(s))),
                        std::string(s.message())});
    }
  }
  const absl::StatusCode code = !lost.empty() ? absl::StatusCode::kUnavailable
                                : !silent.empty()
                                    ? absl::StatusCode::kDeadlineExceeded
                                    : failed_code;
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  std::vector<RankFailure> ranks = lost;
  ranks.insert(ranks.end(), silent.begin(), silent.end());
  ranks.insert(ranks.end(), failed.begin(), failed.end());
  std::vector<std::string> parts;
  for (const RankFailure& f : ranks) {
    parts.push_back(absl::StrCat("rank ", f.rank, ": ", f.message));
  }
  return WithRankFailures(
      absl::Status(code, absl::StrCat("run ", run.id,
                                      " failed: ", absl::StrJoin(parts, "; "))),
      ranks);
}

// Why a commit did not write every rank's destinations, each rank named;
// OK when all did.
absl::Status CommitFailure(const ActiveRun& run,
                           const std::vector<std::string>& hosts) {
  std::vector<RankFailure> ranks;
  std::vector<std::string> parts;
  absl::StatusCode code = absl::StatusCode::kOk;
  for (size_t r = 0; r < run.commits.size(); ++r) {
    const absl::Status s = run.commits[r].value_or(
        absl::DeadlineExceededError("no commit answer by the deadline"));
    if (s.ok()) continue;
    if (code == absl::StatusCode::kOk) code = s.code();
    ranks.push_back({static_cast<int64_t>(r), hosts[r], "commit",
                     std::string(s.message())});
    parts.push_back(absl::StrCat("rank ", r, ": ", s.message()));
  }
  if (ranks.empty()) return absl::OkStatus();
  return WithRankFailures(
      absl::Status(code, absl::StrCat("run ", run.id,
                                      " validated on every rank but its "
                                      "commit failed: ",
                                      absl::StrJoin(parts, "; "))),
      ranks);
}

}  // namespace

absl::Status Job::CheckRunLocked(const std::string& run_id) const {
  if (run_ != nullptr && run_->id == run_id) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "run_id: run \"", run_id, "\" is not running in job \"", name_, "\"",
      run_ == nullptr ? std::string(" (no run is)")
                      : absl::StrCat(" (run ", run_->id, " is)")));
}

void Job::LoseRankLocked(int64_t rank, const std::string& why) {
  if (run_ != nullptr && run_->committing && !run_->commits[rank].has_value()) {
    run_->commits[rank] =
        absl::UnavailableError(absl::StrCat("lost during the commit: ", why));
    return;
  }
  if (run_ == nullptr || run_->reports[rank].has_value() ||
      !run_->lost[rank].empty()) {
    return;
  }
  run_->lost[rank] = why;
  ++run_->settled;
  run_->failed = true;
}

Job::WaitEnd Job::AwaitLocked(const absl::Condition& done, absl::Time deadline,
                              const CallerGone& caller_gone,
                              const std::function<bool()>& give_up) {
  while (true) {
    if (mu_.AwaitWithDeadline(done,
                              std::min(deadline, absl::Now() + kCallerPoll))) {
      return WaitEnd::kDone;
    }
    if (absl::Now() >= deadline) return WaitEnd::kDeadline;
    if (caller_gone && caller_gone()) {
      // A caller's own deadline ends its call a moment before ours (its
      // clock started first): that is the deadline, not a cancel.
      return deadline - absl::Now() <= kDeadlineSlack ? WaitEnd::kDeadline
                                                      : WaitEnd::kCallerGone;
    }
    if (give_up && give_up()) return WaitEnd::kGaveUp;
  }
}

void Job::MarkLostLocked(Slot& slot, const std::string& how) {
  slot.lost_at = clock_();
  slot.lost_how = how;
}

absl::Status Job::LostRanksLocked(absl::Duration agent_wait) const {
  const absl::Time now = clock_();
  bool expired = false;
  std::vector<std::string> lost;
  std::vector<RankFailure> ranks;
  for (const auto& [r, slot] : slots_) {
    if (!slot.lost_at.has_value()) continue;
    expired = expired || now - *slot.lost_at >= agent_wait;
    const std::string how =
        absl::StrFormat("%s %.1f s ago, at %s", slot.lost_how,
                        absl::ToDoubleSeconds(now - *slot.lost_at),
                        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *slot.lost_at,
                                         absl::UTCTimeZone()));
    lost.push_back(absl::StrFormat("rank %d (%s)", r, how));
    ranks.push_back({r, slot.info.host, "lost", how});
  }
  if (!expired) return absl::OkStatus();
  if (lost.size() > 16) lost.resize(16);
  if (ranks.size() > 16) ranks.resize(16);
  return WithRankFailures(
      absl::UnavailableError(absl::StrFormat(
          "job \"%s\" lost %s for longer than --agent_wait_seconds (%g s): %s",
          name_, lost.size() == 1 ? "a rank" : "ranks",
          absl::ToDoubleSeconds(agent_wait), absl::StrJoin(lost, "; "))),
      ranks);
}

absl::Status Job::RefusedRanksLocked() const {
  std::vector<RankFailure> ranks;
  std::vector<std::string> parts;
  for (const auto& [r, refusal] : refused_joins_) {
    const Slot* slot = FindSlotLocked(r);
    if (slot != nullptr && slot->present) continue;
    ranks.push_back({r, refusal.first, "refused_join", refusal.second});
    parts.push_back(absl::StrCat("rank ", r, ": ", refusal.second));
  }
  if (ranks.empty()) return absl::OkStatus();
  return WithRankFailures(
      absl::FailedPreconditionError(
          absl::StrCat("job \"", name_, "\" cannot be ready: ",
                       ranks.size() == 1 ? "an agent was" : "agents were",
                       " refused at Join (restart it with the job's flags): ",
                       absl::StrJoin(parts, "; "))),
      ranks);
}

absl::Status Job::AwaitFreeLocked(absl::Time deadline,
                                  absl::Duration agent_wait,
                                  const CallerGone& caller_gone) {
  auto free = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return shut_down_ || (ReadyLocked() && run_ == nullptr);
  };
  auto give_up = [this, agent_wait]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !RefusedRanksLocked().ok() || !LostRanksLocked(agent_wait).ok();
  };
  const WaitEnd end =
      AwaitLocked(absl::Condition(&free), deadline, caller_gone, give_up);
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  if (end == WaitEnd::kCallerGone) {
    return absl::CancelledError("the caller cancelled RunJob");
  }
  if (end == WaitEnd::kGaveUp) {
    absl::Status refused = RefusedRanksLocked();
    return refused.ok() ? LostRanksLocked(agent_wait) : refused;
  }
  if (end == WaitEnd::kDone) return absl::OkStatus();
  std::vector<std::string> absent;
  std::vector<RankFailure> ranks;
  for (int64_t r = 0; r < world_size_ && absent.size() <= 16; ++r) {
    const Slot* slot = FindSlotLocked(r);
    if (slot == nullptr || !slot->present || slot->mailbox == nullptr) {
      absent.push_back(absl::StrCat(r));
      ranks.push_back(
          {r, slot == nullptr ? "" : slot->info.host,
           slot == nullptr ? "not_joined" : "not_connected",
           slot == nullptr ? "never joined" : "joined, not connected"});
    }
  }
  if (absent.empty()) {
    return absl::DeadlineExceededError(
        absl::StrCat("job \"", name_, "\" was still running run ", run_->id,
                     " at the deadline"));
  }
  if (absent.size() > 16) absent.resize(16);
  if (ranks.size() > 16) ranks.resize(16);
  return WithRankFailures(
      absl::DeadlineExceededError(absl::StrCat(
          "job \"", name_, "\" was not ready by the deadline: ranks ",
          absl::StrJoin(absent, ", "),
          " have not joined or are not connected (world size ", world_size_,
          ", as its agents' --world_size says)")),
      ranks);
}

void Job::StartRunLocked(std::shared_ptr<const RunSpec> spec) {
  run_ = std::make_unique<ActiveRun>();
  run_->id = NewRunId();
  run_->generation = generation_;
  run_->reports.resize(world_size_);
  run_->lost.resize(world_size_);
  run_->executions_done.assign(world_size_, 0);
  run_->executions_total = executor::TotalExecutions(spec->warmup, spec->iters);
  // Agents keep one connection set per group they have used: a new mesh
  // (other groups) opens fresh communicators instead of adding to them.
  std::string mesh = spec->mesh.CanonicalText(true);
  if (comm_prefix_.empty() || comm_generation_ != generation_ ||
      comm_mesh_ != mesh) {
    comm_prefix_ = absl::StrCat(name_, "/", generation_, "/", run_->id);
    comm_generation_ = generation_;
    comm_mesh_ = std::move(mesh);
  }
  auto work = std::make_shared<RunWork>();
  work->run_id = run_->id;
  work->generation = generation_;
  work->digest = spec->Digest();
  work->comm_prefix = comm_prefix_;
  if (!spec->schedule_id.empty()) {
    absl::StatusOr<Schedule*> schedule =
        schedules_.Find(spec->schedule_id, generation_, name_);
    work->send_plan = !schedule.ok() || !(*schedule)->delivered;
  }
  work->live_schedules = schedules_.LiveIds(generation_);
  run_->plan_sent = work->send_plan;
  work->spec = std::move(spec);
  run_->spec = work->spec;
  run_->dispatched = run_->last_report = clock_();
  for (auto& [rank, slot] : slots_) {
    slot.mailbox->Push(WorkItem{WorkItem::Kind::kRun, work, "", ""});
  }
}

Job::WaitEnd Job::AwaitRunEndLocked(absl::Time deadline,
                                    const CallerGone& caller_gone) {
  auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return run_->Complete() || run_->failed || run_->cancelled;
  };
  WaitEnd end = AwaitLocked(absl::Condition(&settled), deadline, caller_gone);
  if (end != WaitEnd::kDone || run_->Complete() || run_->cancelled) {
    return end;
  }
  // A failure: give the other ranks a moment to report or be lost.
  auto complete = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return run_->Complete() || run_->cancelled;
  };
  AwaitLocked(absl::Condition(&complete),
              std::min(deadline, absl::Now() + kFailureGrace), caller_gone);
  return WaitEnd::kDone;
}

void Job::RecordRunLocked(const ActiveRun& run, const absl::Status& failure) {
  RunRecord record{run.id, "validated", "",
                   absl::ToDoubleSeconds(clock_() - run.dispatched)};
  if (!failure.ok()) {
    record.result = absl::StatusCodeToString(failure.code());
    record.error = std::string(failure.message());
  } else {
    for (size_t r = 0; r < run.reports.size(); ++r) {
      if (!run.reports[r].has_value()) continue;
      if (std::optional<std::string> why_not =
              run.reports[r]->WhyNotValidated()) {
        record.result = "not_validated";
        record.error = absl::StrCat("rank ", r, ": ", *why_not);
        break;
      }
    }
  }
  if (record.error.size() > kRunRecordErrorBytes) {
    record.error.resize(kRunRecordErrorBytes);
  }
  recent_.push_back(std::move(record));
  if (recent_.size() > kRecentRuns) recent_.pop_front();
}

std::vector<std::string> Job::HostsLocked() const {
  std::vector<std::string> hosts(world_size_);
  for (const auto& [r, slot] : slots_) {
    if (r >= 0 && r < world_size_) hosts[r] = slot.info.host;
  }
  return hosts;
}

absl::StatusOr<RunResult> Job::FinishRunLocked(WaitEnd end) {
  if (end == WaitEnd::kDone && run_->stopping && AllReportedLocked()) {
    return FinishStoppedLocked();
  }
  std::unique_ptr<ActiveRun> run = std::move(run_);
  store_.EraseRun(run->id);
  EndStoreWaitsLocked(
      [this](const std::string& run_id) { return CheckRunLocked(run_id); });
  ++runs_total_;
  absl::Status failure =
      end == WaitEnd::kCallerGone
          ? absl::CancelledError(
                absl::StrCat("run ", run->id, ": the caller cancelled RunJob"))
      : run->cancelled
          ? absl::CancelledError(
                absl::StrCat("run ", run->id, " was cancelled (CancelJob)"))
          : RunFailure(*run, end == WaitEnd::kDeadline, HostsLocked());
  if (failure.ok() && !run->Complete()) {  // the deadline, before a report
    failure = RunFailure(*run, true, HostsLocked());
  }
  if (failure.ok() && run->committing) {
    failure = CommitFailure(*run, HostsLocked());
  }
  RecordRunLocked(*run, failure);
  if (!run->spec->schedule_id.empty()) {
    NoteScheduleRunLocked(*run->spec, failure.ok());
  }
  active_at_ = clock_();
  if (failure.ok()) {
    RunResult result{run->id, {}, 0};
    result.committed = run->committing;
    result.plan_sent = run->plan_sent;
    result.wall_seconds =
        absl::ToDoubleSeconds(run->last_report - run->dispatched);
    for (auto& report : run->reports)
      result.reports.push_back(*std::move(report));
    return result;
  }
  ++runs_failed_;
  // Whoever failed tore its communicators down, unless every rank reported
  // a refusal in pre-flight, which leaves them as they were.
  if (!RefusedInPreflight(*run)) comm_prefix_.clear();
  for (auto& [r, slot] : slots_) {
    if (slot.mailbox != nullptr && !run->reports[r].has_value()) {
      slot.mailbox->Push(
          WorkItem{WorkItem::Kind::kCancel, nullptr, run->id, ""});
    }
  }
  return failure;
}

// A run its caller stopped, every rank having reported: recorded as
// cancelled, its reports returned marked interrupted. The agents dropped
// their communicators, so the next run opens fresh ones.
RunResult Job::FinishStoppedLocked() {
  std::unique_ptr<ActiveRun> run = std::move(run_);
  store_.EraseRun(run->id);
  EndStoreWaitsLocked(
      [this](const std::string& run_id) { return CheckRunLocked(run_id); });
  ++runs_total_;
  int done = -1;
  for (const auto& report : run->reports) {
    done = done < 0 ? report->executions_done
                    : std::min(done, report->executions_done);
  }
  RecordRunLocked(*run, absl::CancelledError(
                            absl::StrCat("stopped by its caller after ",
                                         std::max(done, 0), " executions")));
  active_at_ = clock_();
  comm_prefix_.clear();
  RunResult result{run->id, {}, 0, true};
  result.wall_seconds =
      absl::ToDoubleSeconds(run->last_report - run->dispatched);
  for (auto& report : run->reports)
    result.reports.push_back(*std::move(report));
  return result;
}

absl::StatusOr<RunResult> Job::Run(std::shared_ptr<const RunSpec> spec,
                                   absl::Time deadline,
                                   absl::Duration agent_wait,
                                   const CallerGone& caller_gone) {
  absl::StatusOr<RunResult> result;
  {
    absl::MutexLock lock(&mu_);
    result = RunLocked(std::move(spec), deadline, agent_wait, caller_gone);
  }
  DeliverDue();
  return result;
}

absl::StatusOr<RunResult> Job::RunLocked(std::shared_ptr<const RunSpec> spec,
                                         absl::Time deadline,
                                         absl::Duration agent_wait,
                                         const CallerGone& caller_gone) {
  ++waiters_;
  absl::Status admitted = AwaitFreeLocked(deadline, agent_wait, caller_gone);
  --waiters_;
  active_at_ = clock_();
  if (admitted.ok()) admitted = CheckCapableLocked(*spec);
  // The schedule may have ended while the run waited (deleted, or an
  // agent joined or left).
  if (admitted.ok() && !spec->schedule_id.empty()) {
    admitted = schedules_.Find(spec->schedule_id, generation_, name_).status();
  }
  if (!admitted.ok()) return admitted;
  StartRunLocked(std::move(spec));
  const WaitEnd end = AwaitRunEndLocked(deadline, caller_gone);
  if (end == WaitEnd::kDone && CommitDueLocked()) {
    CommitLocked(deadline);
  }
  return FinishRunLocked(end);
}

absl::Status Job::Progress(const AgentId& id, const std::string& run_id,
                           int executions_done) {
  absl::MutexLock lock(&mu_);
  absl::Status s = CheckAgentLocked(id);
  if (s.ok()) s = CheckRunLocked(run_id);
  if (!s.ok()) return s;
  int& done = run_->executions_done[id.rank];
  done = std::max(done, std::min(executions_done, run_->executions_total));
  return absl::OkStatus();
}

absl::Status Job::Report(const AgentId& id, int64_t generation,
                         const std::string& run_id,
                         executor::RankReport report) {
  absl::MutexLock lock(&mu_);
  absl::Status s = CheckAgentLocked(id);
  if (s.ok()) s = CheckRunLocked(run_id);
  if (!s.ok()) return s;
  if (generation != run_->generation) {
    return absl::FailedPreconditionError(
        absl::StrCat("generation: ", generation, " is not run ", run_id,
                     "'s generation (", run_->generation, ")"));
  }
  if (run_->reports[id.rank].has_value() || !run_->lost[id.rank].empty()) {
    return absl::OkStatus();  // a repeated report changes nothing
  }
  const RunSpec& spec = *run_->spec;
  // A cross-mesh run's source-only ranks have no result to report.
  const size_t items = spec.ItemsOf(id.rank);
  if (report.status.ok() && report.tensors.size() != items) {
    return absl::InvalidArgumentError(
        absl::StrCat("report: ", report.tensors.size(), " tensors for run ",
                     run_id, ", which runs ", items));
  }
  report.rank = id.rank;
  run_->executions_done[id.rank] =
      std::max(run_->executions_done[id.rank], report.executions_done);
  if (!report.status.ok()) run_->failed = true;
  run_->reports[id.rank] = std::move(report);
  ++run_->settled;
  run_->last_report = clock_();
  return absl::OkStatus();
}

std::string Job::Cancel(bool stop) {
  absl::MutexLock lock(&mu_);
  if (run_ == nullptr) return "";
  // Every rank validated and destinations are being written: stopping
  // now would leave some written and some not.
  if (run_->committing) return run_->id;
  if (!stop) {
    run_->cancelled = true;
    return run_->id;
  }
  run_->stopping = true;
  for (auto& [r, slot] : slots_) {
    if (slot.mailbox != nullptr && !run_->reports[r].has_value()) {
      slot.mailbox->Push(
          WorkItem{WorkItem::Kind::kCancel, nullptr, run_->id, ""});
    }
  }
  return run_->id;
}

// Every rank reported: the run as far as it went.
bool Job::AllReportedLocked() const {
  for (const auto& report : run_->reports) {
    if (!report.has_value()) return false;
  }
  return true;
}

}  // namespace reshard::coordinator
