// Where each rank's local piece of a distributed tensor sits: the box
// (offset, extent per tensor dim) that nested torch.chunk splits assign to a
// mesh position under a DistState. Plans are rank-independent because every
// rank can derive these from (global shape, state, its coordinates).
#ifndef RESHARD_PLANNER_CORE_LOCAL_LAYOUT_H_
#define RESHARD_PLANNER_CORE_LOCAL_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"

namespace reshard {

// The number of elements of a tensor of `shape` (1 for a scalar).
inline int64_t Numel(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// A box of a tensor: global offsets and extents per tensor dim.
struct Box {
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t e : extent) n *= e;
    return n;
  }
  bool operator==(const Box&) const = default;
};

// The box `position` holds under `state`. Partial and Replicate dims do not
// split. Shard orders are applied outermost first.
Box LocalBox(const Mesh& mesh, const DistState& state,
             absl::Span<const int64_t> shape, int64_t position);

// The largest extent of `tensor_dim` over all ranks after the first `levels`
// entries of its shard order: the extent at coordinate 0, since part 0 of a
// torch.chunk split is always the largest.
int64_t MaxExtent(const Mesh& mesh, const DistState& state, int64_t extent,
                  int tensor_dim, int levels);

// MaxExtent for every tensor dim with its whole order applied.
std::vector<int64_t> MaxLocalExtents(const Mesh& mesh, const DistState& state,
                                     absl::Span<const int64_t> shape);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_LOCAL_LAYOUT_H_
