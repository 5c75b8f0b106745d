// Membership, the rendezvous store and the job's description; the run's
// life is in job_run.cc.
#include "coordinator/job.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "common/same_secret.h"
#include "coordinator/active_run.h"

namespace reshard::coordinator {
namespace {

// Refused Joins a job remembers, for its runs' messages (a bound on what a
// stream of bad agents can make it hold).
constexpr size_t kMaxRefusedJoins = 16;

}  // namespace

Job::Job(std::string name, int64_t world_size, Backend backend, JobToken token,
         const CoordinatorLimits& limits, Clock clock,
         std::shared_ptr<StoreBudget> store_budget)
    : name_(std::move(name)),
      world_size_(world_size),
      backend_(backend),
      token_(std::move(token)),
      limits_(limits),
      store_(limits, std::move(store_budget)),
      clock_(std::move(clock)),
      active_at_(clock_()) {}

// Nothing may wait on a job no one can reach any more.
Job::~Job() {
  {
    absl::MutexLock lock(&mu_);
    EndStoreWaitsLocked([this](const std::string&) {
      return absl::UnavailableError(
          absl::StrCat("job \"", name_, "\" was forgotten"));
    });
  }
  DeliverDue();
}

absl::StatusOr<Joined> Job::Join(const JoinInfo& info,
                                 const SessionSource& sessions) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  const int64_t rank = info.agent.rank;
  Slot& slot = slots_[rank];
  if (slot.present && slot.incarnation == info.agent.incarnation) {
    // The same process again (after its stream dropped): nothing changes,
    // but only for the holder of its session.
    absl::Status s = CheckSessionLocked(slot, info.agent);
    if (!s.ok()) return s;
    return Joined{generation_, slot.session};
  }
  if (slot.present && slot.mailbox != nullptr) {
    return absl::AlreadyExistsError(
        absl::StrCat("rank ", rank, " of job \"", name_,
                     "\" is held by a live agent (connected); stop it before "
                     "starting another"));
  }
  if (slot.present) {
    LoseRankLocked(rank, "its agent was replaced by a new incarnation");
  }
  refused_joins_.erase(rank);
  slot = Slot{};
  slot.present = true;
  slot.info = AgentInfo{rank, info.version, info.host, false};
  slot.capabilities = info.capabilities;
  slot.incarnation = info.agent.incarnation;
  slot.session = sessions(info.agent);
  active_at_ = clock_();
  return Joined{++generation_, slot.session};
}

void Job::NoteRefusedJoin(int64_t rank, const std::string& host,
                          const std::string& why) {
  absl::MutexLock lock(&mu_);
  if (rank < 0 || rank >= world_size_) return;
  if (refused_joins_.size() >= kMaxRefusedJoins &&
      !refused_joins_.count(rank)) {
    return;
  }
  refused_joins_[rank] = {host, why};
}

absl::StatusOr<std::shared_ptr<Mailbox>> Job::Connect(const AgentId& id) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return absl::UnavailableError("the server is shutting down");
  absl::Status s = CheckAgentLocked(id);
  if (!s.ok()) return s;
  Slot& slot = slots_[id.rank];
  if (slot.mailbox != nullptr) {
    // Work queued on the old stream is lost with it.
    LoseRankLocked(id.rank, "its agent reconnected during the run");
    slot.mailbox->Close(
        "a newer dispatch stream of the same agent replaced "
        "this one");
  } else {
    ++generation_;  // the rank is back
  }
  slot.mailbox = std::make_shared<Mailbox>();
  slot.info.connected = true;
  slot.lost_at.reset();
  return slot.mailbox;
}

void Job::Disconnect(const AgentId& id,
                     const std::shared_ptr<Mailbox>& mailbox) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(id.rank);
  if (it == slots_.end()) return;
  Slot& slot = it->second;
  if (slot.mailbox != mailbox) return;  // already replaced
  slot.mailbox = nullptr;
  slot.info.connected = false;
  MarkLostLocked(slot, "its agent's dispatch stream closed");
  active_at_ = clock_();
  ++generation_;
  LoseRankLocked(id.rank, "its agent's dispatch stream closed");
}

absl::Status Job::Leave(const AgentId& id) {
  absl::MutexLock lock(&mu_);
  absl::Status s = CheckAgentLocked(id);
  if (!s.ok()) return s;
  Slot& slot = slots_[id.rank];
  if (slot.mailbox != nullptr) slot.mailbox->Close("the agent left");
  slot = Slot{};
  MarkLostLocked(slot, "its agent left the job");
  active_at_ = clock_();
  ++generation_;
  LoseRankLocked(id.rank, "its agent left the job");
  return absl::OkStatus();
}

absl::Status Job::CheckAgentLocked(const AgentId& id) const {
  if (id.rank < 0 || id.rank >= world_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent.rank: ", id.rank, " is outside job \"", name_,
                     "\"'s ranks [0, ", world_size_, ")"));
  }
  const Slot* found = FindSlotLocked(id.rank);
  if (found == nullptr || !found->present) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", id.rank, " has not joined job \"", name_, "\"; join first"));
  }
  const Slot& slot = *found;
  // Neither number is shown: the caller may not be the rank's agent.
  if (slot.incarnation != id.incarnation) {
    return absl::FailedPreconditionError(
        absl::StrCat("agent.incarnation: not rank ", id.rank,
                     "'s current incarnation in job \"", name_,
                     "\"; a restarted agent joins again"));
  }
  return CheckSessionLocked(slot, id);
}

const Job::Slot* Job::FindSlotLocked(int64_t rank) const {
  auto it = slots_.find(rank);
  return it == slots_.end() ? nullptr : &it->second;
}

absl::Status Job::CheckSessionLocked(const Slot& slot,
                                     const AgentId& id) const {
  if (SameSecret(id.session, slot.session)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "agent.session: not the session rank ", id.rank, " of job \"", name_,
      "\" was given when it joined; only that agent may act for the rank"));
}

bool Job::ReadyLocked() const {
  if (shut_down_ || static_cast<int64_t>(slots_.size()) < world_size_) {
    return false;
  }
  for (const auto& [rank, slot] : slots_) {
    if (!slot.present || slot.mailbox == nullptr) return false;
  }
  return true;
}

absl::Status Job::StoreSet(const AgentId& id, const std::string& run_id,
                           const std::string& key, std::string value) {
  absl::Status s;
  {
    absl::MutexLock lock(&mu_);
    s = CheckAgentLocked(id);
    if (s.ok()) s = CheckRunLocked(run_id);
    if (s.ok()) s = store_.Set(run_id, key, std::move(value), id.rank);
    if (s.ok()) store_waits_.KeySet(key, store_, due_);
  }
  DeliverDue();
  return s;
}

absl::StatusOr<int64_t> Job::StoreDelete(const AgentId& id,
                                         const std::string& run_id,
                                         const std::string& prefix) {
  absl::MutexLock lock(&mu_);
  absl::Status s = CheckAgentLocked(id);
  if (s.ok()) s = CheckRunLocked(run_id);
  if (!s.ok()) return s;
  return store_.ErasePrefix(run_id, prefix, id.rank);
}

absl::StatusOr<int64_t> Job::AwaitStore(const AgentId& id,
                                        const std::string& run_id,
                                        std::vector<std::string> keys,
                                        StoreAnswer answer) {
  absl::StatusOr<int64_t> wait;
  {
    absl::MutexLock lock(&mu_);
    absl::Status s = CheckAgentLocked(id);
    if (s.ok()) s = CheckRunLocked(run_id);
    if (s.ok() && shut_down_) {
      s = absl::UnavailableError("the server is shutting down");
    }
    if (!s.ok()) return s;
    wait = store_waits_.Add(run_id, std::move(keys), std::move(answer), store_,
                            due_);
  }
  DeliverDue();
  return wait;
}

void Job::ExpireStoreWait(int64_t wait) {
  {
    absl::MutexLock lock(&mu_);
    std::optional<StoreWaiters::Waiter> waiter = store_waits_.Take(wait);
    if (!waiter.has_value()) return;
    std::vector<std::string> missing = store_.Missing(waiter->keys);
    const size_t count = missing.size();
    if (missing.size() > 4) missing.resize(4);
    due_.push_back(DueAnswer{
        std::move(waiter->answer),
        absl::DeadlineExceededError(absl::StrCat(
            count, " of ", waiter->keys.size(),
            " rendezvous keys still missing at the deadline: ",
            absl::StrJoin(missing, ", "), count > 4 ? ", ..." : ""))});
  }
  DeliverDue();
}

void Job::DropStoreWait(int64_t wait) {
  {
    absl::MutexLock lock(&mu_);
    std::optional<StoreWaiters::Waiter> waiter = store_waits_.Take(wait);
    if (!waiter.has_value()) return;
    due_.push_back(DueAnswer{std::move(waiter->answer),
                             absl::CancelledError("the caller went away")});
  }
  DeliverDue();
}

absl::StatusOr<std::vector<std::string>> Job::StoreGet(
    const AgentId& id, const std::string& run_id,
    const std::vector<std::string>& keys, absl::Time deadline) {
  struct Result {
    absl::Notification done;
    absl::StatusOr<std::vector<std::string>> values;
  };
  auto result = std::make_shared<Result>();
  absl::StatusOr<int64_t> wait =
      AwaitStore(id, run_id, keys,
                 [result](absl::StatusOr<std::vector<std::string>> values) {
                   result->values = std::move(values);
                   result->done.Notify();
                 });
  if (!wait.ok()) return wait.status();
  if (!result->done.WaitForNotificationWithDeadline(deadline)) {
    ExpireStoreWait(*wait);
    result->done.WaitForNotification();  // answered by now, or just being
  }
  return std::move(result->values);
}

void Job::EndStoreWaitsLocked(
    const std::function<absl::Status(const std::string&)>& why) {
  for (StoreWaiters::Waiter& waiter : store_waits_.TakeAll()) {
    due_.push_back(DueAnswer{std::move(waiter.answer), why(waiter.run_id)});
  }
}

void Job::DeliverDue() {
  std::vector<DueAnswer> due;
  {
    absl::MutexLock lock(&mu_);
    due.swap(due_);
  }
  for (DueAnswer& answer : due) {
    std::move(answer.answer)(std::move(answer.result));
  }
}

JobSnapshot Job::Info(const AgentPage& page) const {
  absl::MutexLock lock(&mu_);
  JobSnapshot info;
  info.name = name_;
  info.world_size = world_size_;
  info.backend = backend_;
  info.open = token_.open();
  info.generation = generation_;
  info.runs_total = runs_total_;
  info.runs_failed = runs_failed_;
  info.store_keys = store_.keys();
  info.store_bytes = store_.bytes();
  info.state = run_ != nullptr ? "running"
               : ReadyLocked() ? "ready"
                               : "joining";
  if (run_ != nullptr) {
    info.current_run = run_->id;
    info.current_run_progress = {
        *std::min_element(run_->executions_done.begin(),
                          run_->executions_done.end()),
        run_->executions_total,
        absl::ToDoubleSeconds(clock_() - run_->dispatched)};
  }
  info.run_calls = waiters_;
  info.recent_runs.assign(recent_.begin(), recent_.end());
  for (const auto& [id, schedule] : schedules_.Of(generation_)) {
    const RunSpec& spec = *schedule->spec;
    info.schedules.push_back(
        {id, spec.cross_batch.empty() ? 1 : int64_t(spec.cross_batch.size()),
         schedule->delivered});
  }
  for (const auto& [rank, slot] : slots_) {
    if (!slot.present) continue;
    ++info.agents_joined;
    if (slot.info.connected) ++info.agents_connected;
    if (rank < page.first_rank || info.next_rank >= 0) continue;
    if (static_cast<int64_t>(info.agents.size()) < page.max_agents) {
      info.agents.push_back(slot.info);
    } else {
      info.next_rank = rank;
    }
  }
  return info;
}

void Job::Shutdown(const std::string& reason) {
  {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (auto& [rank, slot] : slots_) {
      if (slot.mailbox != nullptr) slot.mailbox->Close(reason);
    }
    EndStoreWaitsLocked([&reason](const std::string&) {
      return absl::UnavailableError(reason);
    });
  }
  DeliverDue();
}

std::optional<absl::Time> Job::IdleSince() const {
  absl::MutexLock lock(&mu_);
  if (waiters_ > 0 || run_ != nullptr) return std::nullopt;
  for (const auto& [rank, slot] : slots_) {
    if (slot.mailbox != nullptr) return std::nullopt;
  }
  return active_at_;
}

bool Job::Abandoned() const {
  absl::MutexLock lock(&mu_);
  if (waiters_ > 0 || run_ != nullptr) return false;
  for (const auto& [rank, slot] : slots_) {
    if (slot.present) return false;
  }
  return true;
}

}  // namespace reshard::coordinator
