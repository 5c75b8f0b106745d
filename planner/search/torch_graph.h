// torch_graph: the pinned PyTorch release's (kTorchVersion) Dijkstra
// redistribute planner reproduced exactly (docs/DESIGN.md §3.1): the same
// edges and neighbour order (its destination-directed S -> P(sum) edges
// included), the same torch cost model (bit for bit), FIFO tie-breaks by
// push counter, and termination when the destination is popped. PyTorch
// reads its devices per host from the device count (1 on CPU), which
// PlanOptions::devices_per_host stands for.
#ifndef RESHARD_PLANNER_SEARCH_TORCH_GRAPH_H_
#define RESHARD_PLANNER_SEARCH_TORCH_GRAPH_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"
#include "planner/cost/cost_model.h"
#include "planner/search/search_support.h"

namespace reshard {

struct GraphResult {
  std::vector<Step> steps;  // unpriced single-dim steps
  int64_t states_expanded = 0;
};

// Searches with `torch_model` (which must be of kind kTorch), expanding at
// most `budget` states, its tables within `max_bytes` (stopped once they
// hold half of it, as the optimal search is: search_support.h).
// FAILED_PRECONDITION when PyTorch's graph has no path; RESOURCE_EXHAUSTED
// naming options.search_budget, or --max_search_bytes, when the budget or
// the memory runs out first (there is no fallback: a baseline that
// answered with another planner's plan would no longer be PyTorch's plan).
// `stop` (may be empty) is polled and its non-OK status returned.
absl::StatusOr<GraphResult> TorchGraphSteps(
    const Mesh& mesh, const CostModel& torch_model, const DistState& src,
    const DistState& dst, int64_t budget, const StopCheck& stop = {},
    int64_t max_bytes = kDefaultMaxSearchBytes);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_TORCH_GRAPH_H_
