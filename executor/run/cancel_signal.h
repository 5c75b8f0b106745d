// A run's cancellation as another thread raises it (the agent's stream
// reader) and a backend's polling loop reads it: a flag read without a
// lock on every poll, and the first reason given. Thread-safe.
#ifndef RESHARD_EXECUTOR_RUN_CANCEL_SIGNAL_H_
#define RESHARD_EXECUTOR_RUN_CANCEL_SIGNAL_H_

#include <atomic>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace reshard::executor {

class CancelSignal {
 public:
  // Raises the signal; the first reason is kept.
  void Raise(absl::string_view why) {
    absl::MutexLock lock(&mu_);
    if (raised_.load(std::memory_order_relaxed)) return;
    why_ = std::string(why);
    raised_.store(true, std::memory_order_release);
  }
  bool raised() const { return raised_.load(std::memory_order_acquire); }
  // The reason, once raised ("" before).
  std::string why() const {
    absl::MutexLock lock(&mu_);
    return why_;
  }

 private:
  std::atomic<bool> raised_{false};
  mutable absl::Mutex mu_;
  std::string why_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_CANCEL_SIGNAL_H_
