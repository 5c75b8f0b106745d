// One agent's queue of work, drained by its dispatch stream. Pop waits
// (bounded) so the stream can notice a cancelled call or a closing server
// between items; Close wakes it for good.
#ifndef RESHARD_COORDINATOR_MAILBOX_H_
#define RESHARD_COORDINATOR_MAILBOX_H_

#include <deque>
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
  // No more items; `why` is what the stream tells the agent.
  void Close(std::string why);
  bool closed() const;
  std::string close_reason() const;

 private:
  mutable absl::Mutex mu_;
  std::deque<WorkItem> items_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::string why_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_MAILBOX_H_
