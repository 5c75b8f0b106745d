// `reshardctl job prepare NAME`: a cross-mesh move planned once for a job
// and kept there as a schedule (docs/DESIGN.md §9, "A static schedule"),
// which `job run NAME --schedule ID` runs without planning; `--delete ID`
// forgets one.
#ifndef RESHARD_CLIENT_JOB_PREPARE_COMMAND_H_
#define RESHARD_CLIENT_JOB_PREPARE_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "client/cli_args.h"

namespace reshard::client {

extern const char kJobPrepareUsage[];

// Prepares (from the cross-mesh flags of `plan`) or deletes (--delete ID)
// a schedule of `job`, printing its id, generation and plan (or with
// --json one object: schedule_id, generation, schedules, plan). The
// flags' INVALID_ARGUMENT, or the service's error.
absl::Status RunJobPrepareCommand(const ServerFlags& server,
                                  const std::string& job,
                                  absl::Span<const std::string> argv,
                                  std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_JOB_PREPARE_COMMAND_H_
