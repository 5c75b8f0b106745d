// The plan of last resort: gather everything to R, then split and partition
// into `dst`. Always legal (every Partial dim reduces on its own, every
// shard order pops from its end), never good: the optimal planner falls back
// to it only when its search budget runs out and PyTorch's greedy planner
// cannot plan the request either (e.g. S -> P(avg), non-default orders).
#ifndef RESHARD_PLANNER_SEARCH_REPLICATE_FALLBACK_H_
#define RESHARD_PLANNER_SEARCH_REPLICATE_FALLBACK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"

namespace reshard {

// Single-dim steps from `src` through all-Replicate to `dst` (unpriced).
absl::StatusOr<std::vector<Step>> ViaReplicateSteps(const Mesh& mesh,
                                                    const DistState& src,
                                                    const DistState& dst);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_REPLICATE_FALLBACK_H_
