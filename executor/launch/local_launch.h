// Runs N ranks of a job as child processes of this one (reshardctl exec
// --local, multi-process tests): each child runs `body(rank)` and exits;
// what it returns comes back to the parent through a pipe. The parent waits
// up to a deadline, then kills the children that are still running — only
// the processes it started — and reaps every one of them, so no child
// outlives the call.
#ifndef RESHARD_EXECUTOR_LAUNCH_LOCAL_LAUNCH_H_
#define RESHARD_EXECUTOR_LAUNCH_LOCAL_LAUNCH_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace reshard::executor {

struct ChildResult {
  std::string output;      // what body() returned (empty if it never did)
  int exit_code = -1;      // the child's exit status; -1 when killed
  bool killed = false;     // still running at the deadline, or died by signal
  int signal = 0;          // the signal that ended it, if any
  bool timed_out = false;  // killed here at the deadline
  // Killed here `after_loss` after child `stopped_after` ended without
  // returning anything (-1: not stopped so).
  int stopped_after = -1;
};

// Forks `ranks` children; child r runs `body(r)`. Call only while this
// process has a single thread (fork copies just the caller's thread).
// INTERNAL when a process or pipe cannot be created (children already
// started are killed and reaped). With `after_loss`, once a child has ended
// without returning anything (killed, crashed), the others still running
// get that long to finish (their peers' failures reach them within their
// own timeouts) and are then killed: a run that lost a rank ends soon,
// whatever the deadline.
absl::StatusOr<std::vector<ChildResult>> RunLocalRanks(
    int ranks, const std::function<std::string(int)>& body,
    std::chrono::milliseconds deadline,
    std::optional<std::chrono::milliseconds> after_loss = std::nullopt);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_LAUNCH_LOCAL_LAUNCH_H_
