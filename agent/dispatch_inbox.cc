#include "agent/dispatch_inbox.h"

#include <algorithm>
#include <utility>

namespace reshard::agent {

bool DispatchInbox::CancelCurrentLocked(const std::string& why) {
  if (current_.empty() || cancelled_.has_value()) return false;
  cancelled_ = why;
  return true;
}

void DispatchInbox::NotifyCancel(bool cancelled, const std::string& why) {
  if (cancelled && on_cancel_) on_cancel_(why);
}

void DispatchInbox::Deliver(v1::Work work) {
  const std::string why = "by the Coordinator";
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    if (work.kind_case() == v1::Work::kCancel) {
      const std::string& id = work.cancel().run_id();
      if (current_ == id) cancelled = CancelCurrentLocked(why);
      // A run cancelled before it started never starts.
      std::erase_if(items_, [&id](const v1::Work& queued) {
        return queued.kind_case() == v1::Work::kRun &&
               queued.run().run_id() == id;
      });
    }
    items_.push_back(std::move(work));
  }
  NotifyCancel(cancelled, why);
}

void DispatchInbox::Close(const std::string& why) {
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    cancelled = CancelCurrentLocked(why);
    // Their reports could not be delivered: queued runs never start.
    std::erase_if(items_, [](const v1::Work& queued) {
      return queued.kind_case() == v1::Work::kRun;
    });
  }
  NotifyCancel(cancelled, why);
}

std::optional<v1::Work> DispatchInbox::Next() {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || !items_.empty();
  };
  mu_.Await(absl::Condition(&ready));
  if (items_.empty()) return std::nullopt;
  v1::Work work = std::move(items_.front());
  items_.pop_front();
  // A run is current from the moment it leaves the queue: a cancel that
  // arrives before the runner calls Begin must still reach it.
  if (work.kind_case() == v1::Work::kRun) BeginLocked(work.run().run_id());
  return work;
}

void DispatchInbox::Begin(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  if (current_ != run_id) BeginLocked(run_id);
}

void DispatchInbox::BeginLocked(const std::string& run_id) {
  current_ = run_id;
  cancelled_.reset();
  if (closed_) cancelled_ = "the dispatch stream had ended";
}

void DispatchInbox::Finish() {
  absl::MutexLock lock(&mu_);
  current_.clear();
  cancelled_.reset();
}

std::optional<std::string> DispatchInbox::Cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

}  // namespace reshard::agent
