// `reshardctl plan --batch FILE` (docs/DESIGN.md §8): plans the tensors of a
// batch file (client/batch_file.h) on the mesh and options of the usual plan
// flags, on the service or in-process with --offline, and prints every
// item's plan or error, the buckets and the collectives and modelled time
// before and after bucketing: a table, or with --json one object
// (planner/format/batch_format.h). A command of its own so that `plan` keeps
// its one-tensor path unchanged.
#ifndef RESHARD_CLIENT_BATCH_COMMAND_H_
#define RESHARD_CLIENT_BATCH_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cli_args.h"
#include "planner/batch/batch_plan.h"
#include "planner/core/mesh.h"
#include "run_values/batch_work.h"

namespace reshard::client {

// True when `argv` (after `plan`) asks for a batch (--batch).
bool HasBatchFlag(const std::vector<std::string>& argv);

// Runs `reshardctl plan --batch FILE ...`, printing to `out`. OK only when
// every item was planned: otherwise, after printing, the first item's error
// (the table or JSON shows them all). INVALID_ARGUMENT naming the flag for
// bad flags (--shape, --dtype, --from, --to belong to the file's lines).
absl::Status RunPlanBatch(const ServerFlags& server,
                          const std::vector<std::string>& argv,
                          std::ostream& out);

// A batch planned as the batch flags say (`plan --batch` and `exec
// --batch` share them): the mesh, the items' names and the batch.
struct PlannedBatch {
  Mesh mesh;
  std::vector<std::string> names;
  BatchPlan batch;
  PlanOptions options;  // the items' shared options
};

// The flags a batch is planned with, beside the plan flags.
std::vector<std::string> BatchFlags();

// Plans `--batch FILE` on the mesh and options of `args`, in-process when
// `server` is unset, else on the service (items that do not parse here
// are their own errors and are not sent).
absl::StatusOr<PlannedBatch> PlanBatchFromFlags(
    const CliArgs& args, const std::optional<ServerFlags>& server);

// A planned batch as it runs (`exec --batch`, `job run --batch`): every
// item planned (else INVALID_ARGUMENT "--batch: items[i]...": a batch runs
// whole); the rows are the schedule or, not `bucketed`, one step per row
// tensor by tensor (UnbucketedSchedule).
absl::StatusOr<executor::BatchWork> RunnableBatch(const PlannedBatch& planned,
                                                  bool bucketed);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_BATCH_COMMAND_H_
