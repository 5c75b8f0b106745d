#include "coordinator/mailbox.h"

#include <utility>

namespace reshard::coordinator {

void Mailbox::Push(WorkItem item) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    items_.push_back(std::move(item));
  }
  Notify();
}

std::optional<WorkItem> Mailbox::TryPop() {
  absl::MutexLock lock(&mu_);
  if (items_.empty()) return std::nullopt;
  WorkItem item = std::move(items_.front());
  items_.pop_front();
  return item;
}

void Mailbox::SetListener(std::function<void()> listener) {
  absl::MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

void Mailbox::Notify() {
  absl::MutexLock lock(&listener_mu_);
  if (listener_) listener_();
}

std::optional<WorkItem> Mailbox::Pop(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || !items_.empty();
  };
  mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
  if (items_.empty()) return std::nullopt;
  WorkItem item = std::move(items_.front());
  items_.pop_front();
  return item;
}

void Mailbox::Close(std::string why) {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    why_ = std::move(why);
  }
  Notify();
}

bool Mailbox::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

std::string Mailbox::close_reason() const {
  absl::MutexLock lock(&mu_);
  return why_;
}

}  // namespace reshard::coordinator
