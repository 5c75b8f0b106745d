// The report of a run of a plan, as `reshardctl exec` and `reshardctl job
// run` print it: a step table (DESIGN §6.3) with checksums and verdict, or
// one JSON object. One writer serves both commands, so a run prints the same
// whether its ranks were local processes or a job's agents.
#ifndef RESHARD_CLIENT_RUN_OUTPUT_H_
#define RESHARD_CLIENT_RUN_OUTPUT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "executor/run_summary.h"
#include "planner/mesh.h"
#include "planner/plan.h"

namespace reshard {

// How the run was launched: what the header line and the JSON say beside
// the summary.
struct RunContext {
  std::string backend = "gloo";
  int64_t world_size = 0;
  // Who ran it, for the table's header line: "8 ranks (processes)" or
  // "job train, 8 agents, run r-12".
  std::string launched_on;
  int iters = 0;
  int warmup = 0;
};

// The plan line, the header line, one row per step, the checksums and the
// verdict line.
void PrintRunTable(const Plan& plan, const RunContext& context,
                   const executor::RunSummary& summary, std::ostream& out);

// One JSON object on one line: plan (DESIGN §4), backend, world_size, iters,
// warmup, steps, checksums, validated, peak_bytes_measured, wall_seconds.
void PrintRunJson(const Mesh& mesh, const Plan& plan, const RunContext& context,
                  const executor::RunSummary& summary, std::ostream& out);

// Prints the table (or, with `json`, the object) and returns the verdict as
// the commands' status: OK when validated, else DATA_LOSS naming the first
// rank that did not validate.
absl::Status PrintRun(const Mesh& mesh, const Plan& plan,
                      const RunContext& context,
                      const executor::RunSummary& summary, bool json,
                      std::ostream& out);

}  // namespace reshard

#endif  // RESHARD_CLIENT_RUN_OUTPUT_H_
