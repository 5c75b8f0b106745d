// The report of a run of a batch (`reshardctl exec --batch`): a table of
// buckets (or, tensor by tensor, of communicating steps), the batch's time
// per run, every tensor's verdict and checksums by rank; or one JSON
// object, exec's with "buckets" in place of "steps" and "tensors". Kept
// apart from run_output.h (one plan's run) so that a job of agents can
// print batches the same way later.
#ifndef RESHARD_CLIENT_BATCH_RUN_OUTPUT_H_
#define RESHARD_CLIENT_BATCH_RUN_OUTPUT_H_

#include <ostream>

#include "absl/status/status.h"
#include "client/run_output.h"
#include "executor/batch_summary.h"
#include "planner/batch_plan.h"
#include "planner/mesh.h"

namespace reshard {

// How the batch ran, beside RunContext's launch description.
struct BatchRunContext {
  RunContext run;
  bool bucketed = true;
};

// Prints the table, or with `json` one object on one line: {"plan": the
// batch JSON of `plan --batch --json`, "backend", "world_size", "iters",
// "warmup", "bucketing", "buckets": [{"index", "op", "group", "members",
// "bytes", "seconds_min", "seconds_median", "algbw_gbps", "busbw_gbps"}],
// "seconds_min", "seconds_median" (the whole batch per run, slowest rank),
// "tensors": [{"name", "checksums", "validated"}], "validated",
// "peak_bytes_measured", "wall_seconds"}. Returns OK when every tensor
// validated, else DATA_LOSS naming the first that did not.
absl::Status PrintBatchRun(const Mesh& mesh, const BatchPlan& batch,
                           const BatchRunContext& context,
                           const executor::BatchSummary& summary, bool json,
                           std::ostream& out);

}  // namespace reshard

#endif  // RESHARD_CLIENT_BATCH_RUN_OUTPUT_H_
