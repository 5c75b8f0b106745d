// `reshardctl job calibrate NAME`: measures a job's links
// (docs/notes/2026-11-27-plan-quality.md, "Measured plan quality"). Runs every
// collective on every communicating group of the mesh at sizes from --min_bytes
// to --max_bytes as ordinary RunJob runs of single-step plans
// (planner/cost/calibration_plans.h), so that Gloo and NCCL jobs alike are
// measured with no new agent protocol; fits each group's link
// (planner/cost/link_calibration.h) and prints the fit, its errors on sizes it
// did not see, and the --link flags that give `mesh register` and `plan` the
// measured links.
#ifndef RESHARD_CLIENT_CALIBRATE_COMMAND_H_
#define RESHARD_CLIENT_CALIBRATE_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "client/cli_args.h"

namespace reshard::client {

extern const char kCalibrateUsage[];

// Runs `job calibrate NAME ARGS` against `server`. INVALID_ARGUMENT names a
// flag; a run that fails fails the command with its error, prefixed by the
// group, op and size; DATA_LOSS when a run did not validate.
absl::Status RunCalibrate(const ServerFlags& server, const std::string& job,
                          absl::Span<const std::string> argv,
                          std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CALIBRATE_COMMAND_H_
