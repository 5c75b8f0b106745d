// One agent's queue of work, drained by its dispatch stream. A stream that
// holds no thread (server/dispatch_stream.h) is told of every Push and of
// Close by its listener and takes items with TryPop; Pop waits (bounded)
// for a caller that has a thread to block.
#ifndef RESHARD_COORDINATOR_MAILBOX_H_
#define RESHARD_COORDINATOR_MAILBOX_H_

#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/work.h"

namespace reshard::coordinator {

class Mailbox {
 public:
  // Queues `item` unless the mailbox is closed.
  void Push(WorkItem item);
  // The next item, or nullopt at `deadline` or once closed and empty.
  std::optional<WorkItem> Pop(absl::Time deadline);
  // The next item now, or nullopt.
  std::optional<WorkItem> TryPop();
  // Called after every Push and after Close, outside the queue's lock,
  // until replaced. Setting another (null: none) returns once no call of
  // the old one is running, so its owner may go away.
  void SetListener(std::function<void()> listener);
  // No more items; `why` is what the stream tells the agent.
  void Close(std::string why);
  bool closed() const;
  std::string close_reason() const;

 private:
  // Tells the listener, if any; never called with mu_ held.
  void Notify();

  mutable absl::Mutex mu_;
  std::deque<WorkItem> items_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::string why_ ABSL_GUARDED_BY(mu_);
  // Held while the listener runs, so replacing it waits for a call.
  absl::Mutex listener_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::function<void()> listener_ ABSL_GUARDED_BY(listener_mu_);
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_MAILBOX_H_
