// The optimal planner's missing_flattened_group warnings (docs/DESIGN.md §3.4):
// which unregistered groups would make the plan cheaper, and by how much
// each one's own remedy (registering that group) would lower the cost.
// Each group is priced on its own, never credited with what several
// groups save together, and never recommended when it saves nothing.
#ifndef RESHARD_PLANNER_SEARCH_MISSING_GROUPS_H_
#define RESHARD_PLANNER_SEARCH_MISSING_GROUPS_H_

#include <vector>

#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/search/optimal_search.h"
#include "planner/search/plan_request.h"

namespace reshard {

// Adds to `warnings` one missing_flattened_group warning per group that
// `cheaper` (the `any` search's plan, clearly cheaper than the `existing`
// plan, which costs `cost`) uses and `mesh` does not register. Its
// saving_us is `cost` minus the cost of the best plan with that group
// registered as well: exact without another search when it is the only
// such group (the `any` plan then uses nothing else), else from a search on
// the mesh with the group added. A group that saves nothing alone is still
// named when the groups together do (saving_us 0, the message says why);
// one whose pricing search runs out of budget or is stopped has saving_us
// 0 and a message saying its own saving is unknown. The pricing searches
// price advice, not the plan: they are not counted in states_expanded.
void AddMissingGroupWarnings(const Mesh& mesh, const PlanRequest& request,
                             double cost, const SearchResult& cheaper,
                             const StopCheck& stop,
                             std::vector<Warning>& warnings);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_MISSING_GROUPS_H_
