#include "executor/backends/nccl/collective_watch.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace reshard::executor {

CollectiveWatch::CollectiveWatch(absl::Duration timeout) : timeout_(timeout) {}

absl::Status CollectiveWatch::Begin(absl::string_view op,
                                    absl::string_view group, absl::Time now) {
  if (state_ == State::kAborted) {
    return absl::FailedPreconditionError(absl::StrCat(
        op, " on group ", group,
        ": the communicator was aborted after an earlier failure (",
        status_.message(), ")"));
  }
  if (state_ == State::kInFlight) {
    return absl::FailedPreconditionError(
        absl::StrCat(op, " on group ", group, ": ", op_, " on group ", group_,
                     " is still in flight"));
  }
  state_ = State::kInFlight;
  op_ = std::string(op);
  group_ = std::string(group);
  deadline_ = now + timeout_;
  status_ = absl::OkStatus();
  return absl::OkStatus();
}

WatchAction CollectiveWatch::Observe(const WatchPoll& poll, absl::Time now) {
  switch (state_) {
    case State::kIdle:
      return WatchAction::kComplete;
    case State::kAborted:
      return WatchAction::kAbort;
    case State::kInFlight:
      break;
  }
  switch (poll.state) {
    case WatchPoll::State::kDone:
      state_ = State::kIdle;
      return WatchAction::kComplete;
    case WatchPoll::State::kError:
      return Abort(absl::InternalError(absl::StrCat(op_, " on group ", group_,
                                                    ": ", poll.error,
                                                    "; communicator aborted")));
    case WatchPoll::State::kInProgress:
      break;
  }
  if (now < deadline_) return WatchAction::kWait;
  return Abort(absl::DeadlineExceededError(absl::StrFormat(
      "%s on group %s: no progress within %g s; communicator aborted", op_,
      group_, absl::ToDoubleSeconds(timeout_))));
}

WatchAction CollectiveWatch::Cancel(absl::string_view why) {
  switch (state_) {
    case State::kAborted:
      return WatchAction::kAbort;
    case State::kInFlight:
      return Abort(absl::CancelledError(
          absl::StrCat(op_, " on group ", group_, ": cancelled (", why,
                       "); communicator aborted")));
    case State::kIdle:
      break;
  }
  return Abort(absl::CancelledError(
      absl::StrCat("cancelled (", why, "); communicator aborted")));
}

void CollectiveWatch::Fail(absl::Status status) {
  if (state_ != State::kAborted) Abort(std::move(status));
}

WatchAction CollectiveWatch::Abort(absl::Status status) {
  state_ = State::kAborted;
  status_ = std::move(status);
  return WatchAction::kAbort;
}

}  // namespace reshard::executor
