// torch_greedy: the greedy redistribute planner of the pinned PyTorch
// release (kTorchVersion), step for step (docs/DESIGN.md §3.1). It is the
// baseline every other planner must not lose to.
#ifndef RESHARD_PLANNER_SEARCH_TORCH_GREEDY_H_
#define RESHARD_PLANNER_SEARCH_TORCH_GREEDY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"

namespace reshard {

// The single-dim steps PyTorch's greedy planner emits from `src` to `dst`
// (unpriced). INVALID_ARGUMENT for non-default shard orders (PyTorch uses
// its graph planner then, and so does MakePlan); FAILED_PRECONDITION where
// PyTorch plans a transform its executor refuses (S -> P(op) for an op
// other than sum, P(sum) -> P(avg)), or cannot plan at all.
absl::StatusOr<std::vector<Step>> TorchGreedySteps(const Mesh& mesh,
                                                   const DistState& src,
                                                   const DistState& dst);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_TORCH_GREEDY_H_
