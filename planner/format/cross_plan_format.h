// Text renderings of a cross-mesh plan (docs/DESIGN.md §9): its JSON
// (normative; one object on one line; fields in docs/PLAN_JSON.md) and a
// human-readable summary.
#ifndef RESHARD_PLANNER_FORMAT_CROSS_PLAN_FORMAT_H_
#define RESHARD_PLANNER_FORMAT_CROSS_PLAN_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "planner/core/mesh.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_plan.h"

namespace reshard {

// The JSON lists at most this many transfers, else none and
// `transfers_omitted` (docs/DESIGN.md §9).
inline constexpr int64_t kMaxListedTransfers = 100000;

std::string CrossPlanJson(const Mesh& src_mesh, const Mesh& dst_mesh,
                          const CrossMeshPlan& plan,
                          int64_t max_listed = kMaxListedTransfers);

// The states, the pre- and post-steps as tables, the transfers summed per
// rank pair, the totals and the warnings.
std::string CrossPlanTable(const Mesh& src_mesh, const Mesh& dst_mesh,
                           const CrossMeshPlan& plan);

// A batch (cross_batch.h): {"kind":"cross_mesh_batch","items":[{"name",
// "plan"} or {"name","error"}],"buckets":[{"members":[[item,transfer],...],
// "bytes","max_rank_bytes","messages","time_us"}],"pre_collectives",
// "post_collectives","pre_time_us","transfer_time_us","post_time_us",
// "total_time_us","total_bytes","bytes_by_rank","planning_us"}; each
// item's plan lists at most `max_listed` transfers.
std::string CrossBatchJson(const Mesh& src_mesh, const Mesh& dst_mesh,
                           const std::vector<CrossBatchItem>& items,
                           const CrossBatchPlan& batch,
                           int64_t max_listed = kMaxListedTransfers);

// One line per item, one per bucket, and the schedule's totals.
std::string CrossBatchTable(const std::vector<CrossBatchItem>& items,
                            const CrossBatchPlan& batch);

}  // namespace reshard

#endif  // RESHARD_PLANNER_FORMAT_CROSS_PLAN_FORMAT_H_
