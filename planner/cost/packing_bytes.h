// The bytes a collective step copies on a rank besides moving them: the
// blocks it sends or receives that do not lie in place in its tensors
// (step_memory.h's DirectPaths) are packed into, or unpacked from, a wire
// buffer. A gather along a dim with a longer dim before it (R,S(1) -> R,R),
// or an uneven split, pays for this copy; the alpha_beta model prices it at
// the mesh's copy rate (docs/DESIGN.md §3.3). Computed from the largest
// rank's extents without building a layout (the searches price every edge
// with it); it agrees with ChooseDirectPaths on the rank at position 0.
#ifndef RESHARD_PLANNER_COST_PACKING_BYTES_H_
#define RESHARD_PLANNER_COST_PACKING_BYTES_H_

#include <cstdint>

#include "absl/types/span.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"

namespace reshard {

// The elements `t` from `from` packs and unpacks on the rank whose local
// tensor has `extents` (MaxLocalExtents): its input where the blocks it
// sends are not the input's consecutive full blocks, its output likewise
// for the blocks it receives. 0 for all_reduce, local steps and groups of
// one rank. `shape` is the global tensor's.
int64_t PackedElements(const Mesh& mesh, const DistState& from,
                       const Transition& t, absl::Span<const int64_t> shape,
                       absl::Span<const int64_t> extents);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_PACKING_BYTES_H_
