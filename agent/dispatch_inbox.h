// What an agent's dispatch stream has delivered and not yet been handled,
// between the thread that reads the stream and the thread that runs plans.
// Reading on its own thread is what lets a run in flight be stopped: a
// cancel for it, or the end of the stream (the Coordinator went away, so
// its peers are stopping too and its report cannot be delivered), marks
// the current run cancelled at once, and the runner stops at its next
// execution (executor::RunOptions::stopped). Thread-safe.
#ifndef RESHARD_AGENT_DISPATCH_INBOX_H_
#define RESHARD_AGENT_DISPATCH_INBOX_H_

#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "reshard/v1/coordinator.pb.h"

namespace reshard::agent {

class DispatchInbox {
 public:
  // `on_cancel(why)` is called (on the reader's thread, outside the lock)
  // when the current run is cancelled: the agent ends its collectives in
  // flight there instead of at the next execution.
  explicit DispatchInbox(
      std::function<void(const std::string&)> on_cancel = nullptr)
      : on_cancel_(std::move(on_cancel)) {}

  // The reader: one item of the stream. A cancel marks the current run
  // (when it is the one cancelled) and drops a queued run of that id.
  void Deliver(v1::Work work);
  // The reader: the stream ended; the current run is cancelled with `why`
  // and queued runs are dropped.
  void Close(const std::string& why);

  // The runner: the next item, waiting for one; nullopt once the stream
  // has ended and every item was taken. A run taken is the current run.
  std::optional<v1::Work> Next();
  // The runner: `run_id` starts (a no-op when Next made it current, so a
  // cancel in between is kept) / the current run ended.
  void Begin(const std::string& run_id);
  void Finish();
  // Why the current run was cancelled; nullopt while it was not.
  std::optional<std::string> Cancelled() const;

 private:
  void BeginLocked(const std::string& run_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Marks the current run cancelled with `why` unless it already is; true
  // when it did.
  bool CancelCurrentLocked(const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyCancel(bool cancelled, const std::string& why);

  const std::function<void(const std::string&)> on_cancel_;
  mutable absl::Mutex mu_;
  std::deque<v1::Work> items_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::string current_ ABSL_GUARDED_BY(mu_);  // "" between runs
  std::optional<std::string> cancelled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_DISPATCH_INBOX_H_
