// The single-step plans a link calibration times (`reshardctl job
// calibrate`, docs/notes/2026-11-27-plan-quality.md "Measured plan quality"):
// one collective of each op on each communicating group of a mesh, at sizes
// from a few KiB to tens of MiB, run as ordinary plans so that any job's
// agents, Gloo or NCCL, time them the way they time every plan; and strided
// gathers, which time a rank's local copies.
#ifndef RESHARD_PLANNER_COST_CALIBRATION_PLANS_H_
#define RESHARD_PLANNER_COST_CALIBRATION_PLANS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/core/step.h"

namespace reshard {

// The four collectives, in the order calibration reports them.
inline constexpr StepOp kCalibratedOps[] = {
    StepOp::kAllGather, StepOp::kReduceScatter, StepOp::kAllReduce,
    StepOp::kAllToAll};

// The groups a calibration measures: every dim of size > 1, then every
// registered flattened group with two or more dims of size > 1 (a group
// whose ranks equal one dim's is that dim's), each without its size-1 dims.
std::vector<Group> CalibrationGroups(const Mesh& mesh);

// `min_bytes`, 4 x min_bytes, ... up to `max_bytes` (included when on the
// progression). INVALID_ARGUMENT when min_bytes < 4 or max < min.
absl::StatusOr<std::vector<int64_t>> CalibrationSizes(int64_t min_bytes,
                                                      int64_t max_bytes);

// A plan of exactly one `op` on `group` whose step moves about `bytes` (as
// StepCost::bytes counts them) of f32: all_gather S(0) -> R, reduce_scatter
// P(sum) -> S(0), all_reduce P(sum) -> R, all_to_all S(0) -> S(1), every
// dim of `group` in its order and the others R. Priced under the default
// α-β model with the mesh's links.
absl::StatusOr<Plan> CalibrationPlan(const Mesh& mesh, const Group& group,
                                     StepOp op, int64_t bytes);

// CalibrationPlan's all_gather along dim 1 instead (S(1) -> R): the same
// bytes over the same links, but every block lands as a column strip of
// the output, so each rank also unpacks them. Its extra time over the
// contiguous gather is the copy rate calibration measures.
absl::StatusOr<Plan> StridedGatherPlan(const Mesh& mesh, const Group& group,
                                       int64_t bytes);

// The bytes the one step of a calibration plan packs or unpacks on the
// largest rank (packing_bytes.h): 0 for CalibrationPlan's contiguous
// collectives other than all_to_all.
int64_t PackedBytes(const Mesh& mesh, const Plan& plan);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_CALIBRATION_PLANS_H_
