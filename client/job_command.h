// `reshardctl job`: the caller's side of the Coordinator (docs/DESIGN.md §5).
// `list` and `show NAME` print jobs and their agents; `run NAME` runs a
// plan (from the plan flags, planned by the job's replica, or --plan FILE)
// on the job's agents and prints the same table or JSON as `reshardctl
// exec` (client/run_output.h); `cancel NAME` cancels its current run. Job
// calls go to the job's replica of the --server list (planner/job_replica.h).
#ifndef RESHARD_CLIENT_JOB_COMMAND_H_
#define RESHARD_CLIENT_JOB_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cli_args.h"

namespace reshard::client {

// Runs `reshardctl job ARGS` against `server` (one HOST:PORT or several,
// comma-separated; `job run` within server.deadline, 300 s when unset);
// prints to `out`. OK only when the command did what it
// says (for `run`: every rank ran and validated); otherwise INVALID_ARGUMENT
// naming the flag, NOT_FOUND for an unknown job, DATA_LOSS for a run that
// did not validate, or the service's error. `job --help` and `job VERB
// --help` print the usage text to `out`.
absl::Status RunJobCommand(const ServerFlags& server,
                           const std::vector<std::string>& argv,
                           std::ostream& out);

// The usage text of `reshardctl job VERB` (of `job` for an unknown verb).
const char* JobUsage(const std::string& verb);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_JOB_COMMAND_H_
