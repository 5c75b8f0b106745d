#include "common/periodic_task.h"

#include <utility>

namespace reshard {

PeriodicTask::PeriodicTask(absl::Duration period, bool at_once,
                           std::function<bool()> tick)
    : period_(period),
      tick_(std::move(tick)),
      thread_([this, at_once] { Loop(at_once); }) {}

PeriodicTask::~PeriodicTask() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void PeriodicTask::Loop(bool at_once) {
  if (at_once && !tick_()) return;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_), period_);
      if (stop_) return;
    }
    if (!tick_()) return;
  }
}

}  // namespace reshard
