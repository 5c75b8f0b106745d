// Plans a cross-mesh request (docs/DESIGN.md §9): among the src_mid and
// dst_mid candidates (mid_candidates.h), the pair whose pre-steps (the
// optimal planner on the source mesh), transfers (transfer.h's sender
// rule, priced by cross_cost.h) and post-steps (the optimal planner on the
// destination mesh) take the least modelled time; on a tie, fewer bytes,
// then the earlier candidates.
#ifndef RESHARD_PLANNER_CROSS_CROSS_PLANNER_H_
#define RESHARD_PLANNER_CROSS_CROSS_PLANNER_H_

#include "absl/status/statusor.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "planner/cross/cross_request.h"
#include "planner/search/plan_cache.h"
#include "planner/search/search_support.h"

namespace reshard {

// `request` as ValidateCrossMeshRequest leaves it. The pre- and post-steps
// go through `cache` where one is given. Errors: the step planners' (a
// budget or memory bound), FAILED_PRECONDITION where a needed source box
// is held only by unavailable ranks or a Partial source has unavailable
// ranks (they could not take part in its reduction).
absl::StatusOr<CrossMeshPlan> MakeCrossMeshPlan(const Mesh& src_mesh,
                                                const Mesh& dst_mesh,
                                                const CrossMeshRequest& request,
                                                PlanCache* cache = nullptr,
                                                const StopCheck& stop = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_CROSS_PLANNER_H_
