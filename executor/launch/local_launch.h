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
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace reshard::executor {

struct ChildResult {
  std::string output;   // what body() returned (empty if it never did)
  int exit_code = -1;   // the child's exit status; -1 when killed
  bool killed = false;  // still running at the deadline, or died by signal
  int signal = 0;       // the signal that ended it, if any
};

// Forks `ranks` children; child r runs `body(r)`. Call only while this
// process has a single thread (fork copies just the caller's thread).
// INTERNAL when a process or pipe cannot be created (children already
// started are killed and reaped).
absl::StatusOr<std::vector<ChildResult>> RunLocalRanks(
    int ranks, const std::function<std::string(int)>& body,
    std::chrono::milliseconds deadline);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_LAUNCH_LOCAL_LAUNCH_H_
