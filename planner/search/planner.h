// The planning entry point: one request (tensor, source and destination
// states, options) on one mesh in, one priced Plan out. Every planner is
// reached through MakePlan so that options, pricing and warnings mean the
// same thing everywhere. Pure and thread-safe.
#ifndef RESHARD_PLANNER_SEARCH_PLANNER_H_
#define RESHARD_PLANNER_SEARCH_PLANNER_H_

#include "absl/status/statusor.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/search/plan_request.h"

namespace reshard {

// Plans `request` on `mesh`. INVALID_ARGUMENT for requests that do not fit
// the mesh or the planner (tensor.shape when its bytes times the world size
// exceed kMaxTensorBytesTimesRanks); FAILED_PRECONDITION where a torch planner
// cannot plan what PyTorch cannot, or where the plan would need more than
// `max_peak_bytes` in a step (every planner: the optimal search plans
// within the cap; a torch plan or a fallback above it is refused, naming
// its peak and the cap).
//
// The search budget bounds both searches, differently on purpose. When the
// optimal search exceeds it, the optimal planner (the default, which must
// answer) falls back to torch_greedy+merge, or where PyTorch's greedy
// planner cannot plan the request to gathering everything to R and
// splitting again, with a `search_budget_exceeded` warning that sets the
// fallback's cost against the search's lower bound. torch_graph, a
// reproduction of PyTorch's plan, has no fallback that would still be
// PyTorch's plan: past the budget it is RESOURCE_EXHAUSTED naming
// options.search_budget.
//
// `stop` is polled during searches; its non-OK status is returned as is.
// Every cost in the plan is finite (mesh.h's link ranges); no valid
// request is answered INTERNAL.
absl::StatusOr<Plan> MakePlan(const Mesh& mesh, const PlanRequest& request,
                              const StopCheck& stop = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_PLANNER_H_
