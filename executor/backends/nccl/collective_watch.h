// The watchdog of one non-blocking NCCL communicator (docs/DESIGN.md §6.1), as
// a pure state machine: the communicator feeds it what each poll of NCCL and
// CUDA found and the time, and it says whether to keep waiting, to return,
// or to abort the communicator (ncclCommAbort), with the status to return.
// A call that makes no progress within the timeout, or that NCCL reports an
// asynchronous error for, aborts the communicator (as PyTorch's watchdog
// does); every later call on it fails fast instead of hanging on a
// communicator that can no longer complete anything.
//
// Time and poll results are injected, so every transition is tested
// without a GPU. Not thread-safe: the communicator's one caller owns it.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_COLLECTIVE_WATCH_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_COLLECTIVE_WATCH_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace reshard::executor {

// What one poll of the communicator found: its work still queued or
// running (ncclInProgress from ncclCommGetAsyncError, or cudaErrorNotReady
// from cudaStreamQuery), done, or failed (`error` is NCCL's or CUDA's text).
struct WatchPoll {
  enum class State { kInProgress, kDone, kError };
  State state = State::kInProgress;
  std::string error;

  static WatchPoll InProgress() { return {State::kInProgress, ""}; }
  static WatchPoll Done() { return {State::kDone, ""}; }
  static WatchPoll Error(std::string error) {
    return {State::kError, std::move(error)};
  }
};

// What the communicator does after a poll.
enum class WatchAction {
  kWait,      // poll again
  kComplete,  // return OK
  kAbort,     // ncclCommAbort the communicator, return status()
};

class CollectiveWatch {
 public:
  // `timeout` bounds every call.
  explicit CollectiveWatch(absl::Duration timeout);

  // Starts call `op` ("all_gather") for group `group` ("A_C", the name
  // errors give: groups of the same ranks share one NCCL communicator, so
  // one watch) at `now`. FAILED_PRECONDITION once the communicator was
  // aborted (naming the failure that aborted it), or while another call is
  // in flight.
  absl::Status Begin(absl::string_view op, absl::string_view group,
                     absl::Time now);

  // Feeds the in-flight call's poll at `now`. Done completes it (even past
  // the deadline: it finished); an error aborts with INTERNAL; still in
  // progress at or past the deadline aborts with DEADLINE_EXCEEDED. With no
  // call in flight: kComplete, or kAbort once aborted.
  WatchAction Observe(const WatchPoll& poll, absl::Time now);

  // The run was cancelled (`why`): a call in flight is aborted with
  // CANCELLED naming it and the reason, so it does not wait out its
  // timeout; an idle communicator is aborted too (its peers are stopping).
  // kAbort either way; a communicator already aborted keeps its status.
  WatchAction Cancel(absl::string_view why);

  // Aborts with `status`: the provider aborted this communicator because
  // another one failed (docs/DESIGN.md §6.1). An abort keeps its first
  // status.
  void Fail(absl::Status status);

  // The last finished call's status: OK after kComplete, the abort's error
  // after kAbort (and from then on).
  const absl::Status& status() const { return status_; }
  bool aborted() const { return state_ == State::kAborted; }
  bool in_flight() const { return state_ == State::kInFlight; }
  absl::Time deadline() const { return deadline_; }
  absl::Duration timeout() const { return timeout_; }

 private:
  enum class State { kIdle, kInFlight, kAborted };

  WatchAction Abort(absl::Status status);

  absl::Duration timeout_;
  State state_ = State::kIdle;
  std::string op_;     // the call in flight, for its errors
  std::string group_;  // the group it runs on
  absl::Time deadline_ = absl::InfinitePast();
  absl::Status status_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_COLLECTIVE_WATCH_H_
