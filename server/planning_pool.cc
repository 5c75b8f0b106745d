#include "server/planning_pool.h"

#include <malloc.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace reshard::server {

PlanningPool::PlanningPool(PlanningLimits limits) : limits_(limits) {
  workers_.reserve(static_cast<size_t>(std::max(limits_.workers, 1)));
  for (int i = 0; i < std::max(limits_.workers, 1); ++i) {
    workers_.emplace_back([this] { Work(); });
  }
}

PlanningPool::~PlanningPool() { Join(); }

void PlanningPool::Join() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

absl::Status PlanningPool::Submit(uint64_t credential,
                                  std::function<void()> task,
                                  Refusal* refused) {
  absl::MutexLock lock(&mu_);
  // Counted with those on a worker, so that a burst is judged the same
  // whether or not the workers have picked its first searches up yet.
  const int64_t in_pool = static_cast<int64_t>(queue_.size() + busy_.size());
  if (in_pool >= limits_.queue + static_cast<int64_t>(workers_.size())) {
    if (refused != nullptr) *refused = Refusal::kQueueFull;
    return absl::ResourceExhaustedError(absl::StrCat(
        "planning: ", limits_.queue,
        " searches already wait for a worker (--planning_queue); retry "
        "later or plan with a smaller search"));
  }
  const int64_t mine = static_cast<int64_t>(queued_by_.count(credential)) +
                       static_cast<int64_t>(busy_.count(credential));
  if (mine >= limits_.queue_per_credential + 1) {
    if (refused != nullptr) *refused = Refusal::kCredentialQueueFull;
    return absl::ResourceExhaustedError(absl::StrCat(
        "planning: this credential already has ", limits_.queue_per_credential,
        " searches waiting (--planning_queue_per_credential); its searches "
        "run one at a time"));
  }
  queue_.push_back({credential, std::move(task)});
  queued_by_.insert(credential);
  return absl::OkStatus();
}

bool PlanningPool::HasRunnableLocked() const {
  return std::any_of(queue_.begin(), queue_.end(), [this](const Task& t) {
    return busy_.count(t.credential) == 0;
  });
}

void PlanningPool::Work() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return HasRunnableLocked() || (stopping_ && queue_.empty());
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, nothing left
      auto it = std::find_if(
          queue_.begin(), queue_.end(),
          [this](const Task& t) { return busy_.count(t.credential) == 0; });
      task = std::move(*it);
      queue_.erase(it);
      queued_by_.erase(queued_by_.find(task.credential));
      busy_.insert(task.credential);
    }
    task.run();
    // A search's tables are freed by now; hand their pages back so the
    // planner's resident set falls back after heavy calls.
    malloc_trim(0);
    absl::MutexLock lock(&mu_);
    busy_.erase(task.credential);
  }
}

int64_t PlanningPool::queued() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

int64_t PlanningPool::running() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(busy_.size());
}

}  // namespace reshard::server
