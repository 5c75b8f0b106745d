// The per-rank layout of one step: which boxes of its local input a rank
// sends, which boxes of its local output it receives, and the padded block
// every member of its group exchanges (docs/DESIGN.md §2.3, §6.1). This is the
// one definition of a step's data movement in the core: the cost model prices
// its padded blocks and every executor backend packs and unpacks by it.
//
// Wire format: a collective exchanges `group_size` blocks (all_gather
// output, reduce_scatter input, all_to_all input and output) or one block
// (all_reduce, all_gather input, reduce_scatter output), each of
// `BlockNumel()` elements. A box is packed row-major at the start of its
// block; the rest of the block is padding that receivers never read.
// Members of a group agree on every block's extent, so reductions combine
// blocks element by element.
#ifndef RESHARD_PLANNER_CORE_STEP_LAYOUT_H_
#define RESHARD_PLANNER_CORE_STEP_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "planner/core/dist_state.h"
#include "planner/core/local_layout.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"

namespace reshard {

// The padded block of `t` for a group whose largest member holds a local
// tensor of `extents` under the step's source state (the member at
// coordinate 0 of the group's dims; for the whole mesh, MaxLocalExtents):
// the block every member exchanges for a collective, the largest output of
// a chunk. The one formula for "the group's largest block"; extent of one
// tensor dim, the whole shape, or its element count (no allocation: the
// searches price every edge with it).
int64_t PaddedBlockExtent(const Mesh& mesh, const Transition& t,
                          absl::Span<const int64_t> extents, int tensor_dim);
std::vector<int64_t> PaddedBlockShape(const Mesh& mesh, const Transition& t,
                                      absl::Span<const int64_t> extents);
int64_t PaddedBlockNumel(const Mesh& mesh, const Transition& t,
                         absl::Span<const int64_t> extents);

// The ceil-split of `extent` over every dim of `group`: the largest part.
inline int64_t LargestGroupPart(const Mesh& mesh, absl::Span<const int> group,
                                int64_t extent) {
  for (int m : group) extent = (extent + mesh.size(m) - 1) / mesh.size(m);
  return extent;
}

// PaddedBlockNumel given `local_numel`, the product of `extents` (which
// callers pricing many edges of one state already have): only the split
// dim changes.
inline int64_t PaddedBlockNumelOf(const Mesh& mesh, const Transition& t,
                                  absl::Span<const int64_t> extents,
                                  int64_t local_numel) {
  const bool split = t.op == StepOp::kReduceScatter ||
                     t.op == StepOp::kAllToAll || t.op == StepOp::kChunk;
  if (!split) return local_numel;
  const int64_t e = extents[*t.dst_tensor_dim];
  return e == 0 ? 0 : local_numel / e * LargestGroupPart(mesh, t.group, e);
}

// How many blocks a collective's input and output buffers hold.
struct WireBlocks {
  int64_t in = 1;
  int64_t out = 1;
};
WireBlocks CollectiveWireBlocks(StepOp op, int64_t group_size);

// One rank's part in one step. Boxes are in local coordinates (offsets into
// the rank's own input or output tensor).
struct StepLayout {
  std::vector<int64_t> in_shape;   // local tensor under step.from
  std::vector<int64_t> out_shape;  // local tensor under step.to
  int64_t group_size = 1;
  int64_t index = 0;  // this rank's index in its group
  // Collectives: the padded block, equal for every member of the group.
  std::vector<int64_t> block_shape;
  // Collectives: send[j] goes to member j (one box, sent to every member,
  // for all_gather and all_reduce). Local steps: the one box of the input
  // that is copied, or none when the output is all zeros.
  std::vector<Box> send;
  // Collectives: recv[i] is where member i's block lands (one box, the
  // reduction, for all_reduce and reduce_scatter). Local steps: where the
  // copied box lands; the rest of the output is zero.
  std::vector<Box> recv;

  int64_t BlockNumel() const;
};

// The layout of `step` for the rank at mesh `position`. `step` must be legal
// (its `to` is Apply(from, transition)); `global_shape` is the tensor's.
StepLayout MakeStepLayout(const Mesh& mesh,
                          absl::Span<const int64_t> global_shape,
                          const Step& step, int64_t position);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_STEP_LAYOUT_H_
