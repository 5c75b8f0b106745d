// `reshardctl plan --src_mesh ... --dst_mesh ...`: a cross-mesh plan
// (docs/DESIGN.md §9), printed as a summary or its JSON.
#ifndef RESHARD_CLIENT_CROSS_PLAN_COMMAND_H_
#define RESHARD_CLIENT_CROSS_PLAN_COMMAND_H_

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cli_args.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_plan.h"
#include "reshard/client.h"
#include "run_values/cross_work.h"

namespace reshard::client {

// The value flags a cross-mesh plan takes: plan's, with two meshes for its
// one.
std::set<std::string> CrossPlanFlags();

// The two meshes the flags name (--src_mesh, --dst_mesh and their rank
// maps and flattened groups), the destination numbered after the source
// unless --dst_ranks says otherwise; errors name the flag.
struct CrossMeshes {
  Mesh src;
  Mesh dst;
};
absl::StatusOr<CrossMeshes> CrossMeshesFromFlags(const CliArgs& args);

// The request the flags describe between `meshes`; errors name the flag.
absl::StatusOr<CrossMeshRequest> CrossRequestFromFlags(
    const CliArgs& args, const CrossMeshes& meshes);

// The plan the flags ask for between `meshes`: made in-process without a
// server (null) or with --offline, else by the service.
absl::StatusOr<CrossMeshPlan> CrossPlanFromFlags(const ServerFlags* server,
                                                 const CliArgs& args,
                                                 const CrossMeshes& meshes);

// The batch file --batch names, planned in-process between `meshes` (a
// line with its own source mesh on that mesh), its buckets bounded by
// --bucket_bytes: errors name the flag or the file's line; an item that
// cannot be planned is its own error in `plan.plans`.
struct CrossBatch {
  CrossMeshes meshes;
  std::vector<CrossBatchItem> items;
  CrossBatchPlan plan;
  int64_t bucket_bytes = 0;
};
absl::StatusOr<CrossBatch> CrossBatchFromFlags(const CliArgs& args,
                                               const CrossMeshes& meshes);
// The batch file's items and --bucket_bytes as CrossBatchFromFlags reads
// them, not planned (`plan` empty): what the job's replica plans.
absl::StatusOr<CrossBatch> CrossBatchLinesFromFlags(const CliArgs& args,
                                                    const CrossMeshes& meshes);

// Every item of `batch`, planned, as a run's work: the first that could
// not be planned is its error, naming it ("--batch: tensors[t] (NAME): ").
absl::StatusOr<std::vector<executor::CrossWork>> CrossBatchWorks(
    const CrossBatch& batch);

// `batch`'s items with their works, as Client::RunCrossBatchJob and
// PrepareCrossBatch take them.
std::vector<Client::CrossBatchTensor> CrossBatchTensors(
    const CrossBatch& batch, const std::vector<executor::CrossWork>& works);

// `batch`'s items as requests for the job's replica to plan; the first
// line that could not be read is its error ("--batch: tensors[t] (NAME): ").
absl::StatusOr<std::vector<Client::CrossBatchRequestTensor>> CrossBatchRequests(
    const CrossBatch& batch);

// True when `argv` asks for a cross-mesh plan (--src_mesh).
bool HasCrossMeshFlag(const std::vector<std::string>& argv);

absl::Status RunCrossMeshPlan(const ServerFlags& server,
                              const std::vector<std::string>& argv,
                              std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CROSS_PLAN_COMMAND_H_
