// What a cross-mesh plan's transfers cost under the alpha_beta model
// (docs/DESIGN.md §9): every rank's transfers run at once, bounded by its
// link, so the phase takes the cross link's latency plus the busiest
// rank's larger direction over its bandwidth. A rank's copies to itself
// are free: local memory outruns any link, and pricing them would make a
// rank that holds what it needs look slower than one that is sent it.
#ifndef RESHARD_PLANNER_CROSS_CROSS_COST_H_
#define RESHARD_PLANNER_CROSS_CROSS_COST_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/cross/cross_plan.h"
#include "planner/cross/transfer.h"
#include "planner/search/plan_request.h"

namespace reshard {

// `given` with unset fields taken from the slower (by bandwidth, then
// latency) of the two meshes' dim-0 links under the alpha_beta model.
LinkParams ResolveCrossLink(const Mesh& src_mesh, const Mesh& dst_mesh,
                            const TensorSpec& tensor,
                            const PlanOptions& options,
                            const LinkParams& given);

// The bytes each rank sends and receives to and from other ranks, and
// copies to itself.
struct RankBytes {
  int64_t send = 0;
  int64_t recv = 0;
  int64_t self = 0;
};
using RankLoads = absl::flat_hash_map<int64_t, RankBytes>;

// Adds `transfers`' bytes to `loads`.
void AddTransferBytes(const std::vector<Transfer>& transfers, int64_t itemsize,
                      RankLoads& loads);

// The phase's time: the cross link's latency plus the busiest rank's larger
// direction over its bandwidth (0 when nothing crosses); `link` resolved.
double PhaseTimeUs(const RankLoads& loads, const LinkParams& link);

TransferBytes CountBytes(const RankLoads& loads);

TransferBytes CountTransferBytes(const std::vector<Transfer>& transfers,
                                 int64_t itemsize);

// `link` resolved (both fields set).
double TransferTimeUs(const std::vector<Transfer>& transfers, int64_t itemsize,
                      const LinkParams& link);

// The most bytes one rank holds: for each rank of either mesh, the source
// role's (the largest local box under src_mid, or `pre`'s peak where it
// has steps and that is larger) plus, for a rank also in the destination
// mesh, the destination role's (the same for `post` and dst_mid).
int64_t CrossPeakBytes(const Mesh& src_mesh, const Mesh& dst_mesh,
                       const CrossMeshPlan& plan);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_CROSS_COST_H_
