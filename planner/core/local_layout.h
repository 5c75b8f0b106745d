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

// Calls f(local_index, global_linear_index) for every element of `box`
// of a tensor of `shape`, in the box's row-major order.
template <typename F>
void ForEachBoxElement(absl::Span<const int64_t> shape, const Box& box, F f) {
  if (box.numel() == 0) return;
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> index(rank, 0);
  for (int64_t k = 0;; ++k) {
    int64_t linear = 0;
    for (int d = 0; d < rank; ++d) {
      linear = linear * shape[d] + box.offset[d] + index[d];
    }
    f(k, linear);
    int d = rank - 1;
    while (d >= 0 && ++index[d] == box.extent[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

// The box `position` holds under `state`. Partial and Replicate dims do not
// split. Shard orders are applied outermost first.
Box LocalBox(const Mesh& mesh, const DistState& state,
             absl::Span<const int64_t> shape, int64_t position);
// LocalBox's extents alone, written to `extents` (shape.size() of them)
// without allocating: for loops over many ranks.
void LocalExtents(const Mesh& mesh, const DistState& state,
                  absl::Span<const int64_t> shape, int64_t position,
                  absl::Span<int64_t> extents);

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
