// `reshardctl plan --src_mesh ... --dst_mesh ...`: a cross-mesh plan
// (docs/DESIGN.md §9), printed as a summary or its JSON.
#ifndef RESHARD_CLIENT_CROSS_PLAN_COMMAND_H_
#define RESHARD_CLIENT_CROSS_PLAN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cli_args.h"

namespace reshard::client {

// True when `argv` asks for a cross-mesh plan (--src_mesh).
bool HasCrossMeshFlag(const std::vector<std::string>& argv);

absl::Status RunCrossMeshPlan(const ServerFlags& server,
                              const std::vector<std::string>& argv,
                              std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CROSS_PLAN_COMMAND_H_
