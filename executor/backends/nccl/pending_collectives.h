// The collectives an NCCL provider has enqueued and not yet seen complete,
// oldest first (docs/DESIGN.md §6.1). A collective returns once NCCL has
// enqueued it; the run waits for all of them once, at its end
// (CommunicatorProvider::Drain), instead of once per collective. They run
// in order on the provider's one stream, so only the oldest can be making
// progress: its completion (a CUDA event) and its communicator's
// asynchronous error are what the provider polls, and each call gets the
// whole timeout from the moment the one before it finished (or from its
// enqueue, when nothing was before it), the same bound a call waited to
// its end had. A timeout, an error or a cancel aborts: the provider then
// aborts every communicator, since work queued behind a stuck collective
// can never run.
//
// A CollectiveWatch watches the oldest call, so errors read as they do for
// one call ("all_reduce on group world: ...; communicator aborted"). Time
// and polls are injected: every transition is tested without a GPU. Not
// thread-safe: the provider's one caller owns it.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_PENDING_COLLECTIVES_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_PENDING_COLLECTIVES_H_

#include <cstdint>
#include <deque>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/backends/nccl/collective_watch.h"

namespace reshard::executor {

class PendingCollectives {
 public:
  // `timeout` bounds each call's wait.
  explicit PendingCollectives(absl::Duration timeout) : watch_(timeout) {}

  // Call `op` on group `group` was enqueued at `now`; `token` is what the
  // caller polls for it (its completion event's slot). FAILED_PRECONDITION
  // once aborted, naming the failure.
  absl::Status Add(absl::string_view op, absl::string_view group, int64_t token,
                   absl::Time now);

  bool empty() const { return calls_.empty(); }
  size_t size() const { return calls_.size(); }
  // The oldest pending call's token (not empty()).
  int64_t oldest() const { return calls_.front().token; }

  // Feeds the oldest call's poll at `now`. Done retires it: kWait while
  // others remain (the next one's timeout starts at `now`), kComplete when
  // none does. An error aborts with INTERNAL; still in progress at or past
  // its deadline aborts with DEADLINE_EXCEEDED. With nothing pending:
  // kComplete, or kAbort once aborted. An abort forgets every call.
  WatchAction Observe(const WatchPoll& poll, absl::Time now);

  // The run was cancelled (`why`): aborts with CANCELLED, naming the
  // oldest call when one is pending; an abort keeps its first status.
  WatchAction Cancel(absl::string_view why);

  // Aborts with `status` (a call failed before it was pending: the work
  // queued behind it can never run); an abort keeps its first status.
  void Fail(absl::Status status);

  // OK, or the abort's error (from then on).
  const absl::Status& status() const { return watch_.status(); }
  bool aborted() const { return watch_.aborted(); }

 private:
  struct Call {
    std::string op;
    std::string group;
    int64_t token;
  };

  CollectiveWatch watch_;  // on the oldest call
  std::deque<Call> calls_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_PENDING_COLLECTIVES_H_
