// `reshardctl exec`: runs a plan on N local ranks and reports what each
// step cost (docs/DESIGN.md §6.3). The plan comes from the plan flags (planned
// in-process, or by the service when --server is given) or from --plan
// FILE. Ranks are child processes (--threads: threads of this process)
// meeting through a FileStore in a fresh temporary directory.
#ifndef RESHARD_CLIENT_EXEC_COMMAND_H_
#define RESHARD_CLIENT_EXEC_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cli_args.h"

namespace reshard::client {

// Runs `reshardctl exec ARGS`; prints the table (or --json) to `out`. OK
// only when every rank ran and validated; otherwise the status says why
// (INVALID_ARGUMENT for bad flags, FAILED_PRECONDITION for an unusable
// backend, DATA_LOSS for a run that did not validate, the failing rank's
// error otherwise). `server` is set when --server was given.
absl::Status RunExec(const std::optional<ServerFlags>& server,
                     const std::vector<std::string>& argv, std::ostream& out);

// The usage text of `reshardctl exec`.
const char* ExecUsage();

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_EXEC_COMMAND_H_
