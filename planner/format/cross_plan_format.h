// Text renderings of a cross-mesh plan (docs/DESIGN.md §9): its JSON
// (normative; one object on one line; fields in docs/PLAN_JSON.md) and a
// human-readable summary.
#ifndef RESHARD_PLANNER_FORMAT_CROSS_PLAN_FORMAT_H_
#define RESHARD_PLANNER_FORMAT_CROSS_PLAN_FORMAT_H_

#include <cstdint>
#include <string>

#include "planner/core/mesh.h"
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

}  // namespace reshard

#endif  // RESHARD_PLANNER_FORMAT_CROSS_PLAN_FORMAT_H_
