// Where a rank goes when NCCL splits the world communicator into a plan's
// groups (docs/DESIGN.md §6.1). ncclCommSplit is collective over the parent
// communicator: every rank passes a color and a key, ranks with equal colors
// form one new communicator, ordered by key. A GroupSplit is that pair for
// one rank and one group, chosen so that the groups over the same mesh dims
// get distinct colors and every new communicator's ranks follow the group's
// order (docs/DESIGN.md §2.1), whatever the order of its dims and the rank map.
//
// Pure and CUDA-free: the NCCL backend calls it, the core tests it.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_GROUP_SPLIT_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_GROUP_SPLIT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/core/mesh.h"

namespace reshard::executor {

// ncclCommSplit's arguments for one rank. `color` is the smallest global
// rank of the group (equal for its members; distinct between the disjoint
// groups over the same dims; never negative, so never NCCL_SPLIT_NOCOLOR);
// `key` is the rank's index in the group's order.
struct GroupSplit {
  int color = 0;
  int key = 0;
  bool operator==(const GroupSplit&) const = default;
};

// The split of the rank at `position` for its group over `group` (ordered
// mesh dims, g1 outermost). INVALID_ARGUMENT for a bad group or position.
absl::StatusOr<GroupSplit> SplitForGroup(const Mesh& mesh,
                                         absl::Span<const int> group,
                                         int64_t position);

// The same split from the group's global ranks in group order (what a
// CommunicatorProvider is given) and this rank. INVALID_ARGUMENT when
// `rank` is not a member, a rank repeats, or a rank is not an NCCL rank
// (negative or above INT_MAX).
absl::StatusOr<GroupSplit> SplitForRanks(absl::Span<const int64_t> ranks,
                                         int64_t rank);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_GROUP_SPLIT_H_
