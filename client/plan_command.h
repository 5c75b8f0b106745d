// `reshardctl plan`: plans one tensor's redistribution on the planner
// service (or in-process with --offline) and prints the trace, the step
// table and the warnings, or with --json the plan JSON (docs/PLAN_JSON.md)
// — the same output either way. The mesh comes from the mesh flags or, with
// --mesh_id, from the service's registry. `plan --batch FILE` is
// batch_command.h's.
#ifndef RESHARD_CLIENT_PLAN_COMMAND_H_
#define RESHARD_CLIENT_PLAN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cli_args.h"

namespace reshard::client {

// Runs `reshardctl plan ARGS`, printing to `out`. INVALID_ARGUMENT naming
// the flag for bad flags (--mesh_id with --offline or the mesh flags),
// NOT_FOUND for an unknown --mesh_id, the planner's error otherwise.
absl::Status RunPlanCommand(const ServerFlags& server,
                            const std::vector<std::string>& argv,
                            std::ostream& out);

// The usage text of `reshardctl plan`.
const char* PlanUsage();

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_PLAN_COMMAND_H_
