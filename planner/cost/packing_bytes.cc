#include "planner/cost/packing_bytes.h"

#include "planner/core/local_layout.h"

namespace reshard {
namespace {

// True when a tensor whose dims before `dim` hold `leading` elements in all
// and whose `dim` has `extent` splits along `dim` into `n` consecutive full
// runs: nothing before it (leading 1) and an even split.
bool SplitsInPlace(int64_t leading, int64_t extent, int64_t n) {
  return leading == 1 && extent % n == 0;
}

// The product of `extents` before `dim`.
int64_t Leading(absl::Span<const int64_t> extents, int dim) {
  int64_t product = 1;
  for (int d = 0; d < dim; ++d) product *= extents[d];
  return product;
}

// The extent of tensor dim `a` once `group` no longer shards it: what a
// gather over `group` along `a` assembles on the largest rank.
int64_t GatheredExtent(const Mesh& mesh, const DistState& from,
                       const Group& group, absl::Span<const int64_t> shape,
                       int a) {
  DistState popped = from;
  for (int m : group) popped.SetReplicate(m);
  return MaxExtent(mesh, popped, shape[a], a, popped.ShardDepth(a));
}

// The elements a gather over `t.group` along a = src_tensor_dim unpacks
// into its output: the input with dim a gathered and, for all_to_all, its
// dim b split; 0 when the blocks land in place.
int64_t UnpackedElements(const Mesh& mesh, const DistState& from,
                         const Transition& t, absl::Span<const int64_t> shape,
                         absl::Span<const int64_t> extents, int64_t n) {
  const int a = *t.src_tensor_dim;
  const int b = t.op == StepOp::kAllToAll ? *t.dst_tensor_dim : -1;
  const int64_t gathered = GatheredExtent(mesh, from, t.group, shape, a);
  int64_t numel = 1, leading = 1;
  for (int d = 0; d < static_cast<int>(extents.size()); ++d) {
    int64_t e = d == a ? gathered : extents[d];
    if (d == b) e = (extents[b] + n - 1) / n;
    numel *= e;
    if (d < a) leading *= e;
  }
  return SplitsInPlace(leading, gathered, n) ? 0 : numel;
}

}  // namespace

int64_t PackedElements(const Mesh& mesh, const DistState& from,
                       const Transition& t, absl::Span<const int64_t> shape,
                       absl::Span<const int64_t> extents) {
  const int64_t n = mesh.GroupSize(t.group);
  if (n == 1 || !IsCollective(t.op) || t.op == StepOp::kAllReduce) return 0;
  int64_t packed = 0;
  if (t.op != StepOp::kAllGather) {
    // reduce_scatter and all_to_all send blocks of their input.
    const int b = *t.dst_tensor_dim;
    if (!SplitsInPlace(Leading(extents, b), extents[b], n)) {
      packed += Numel(extents);
    }
  }
  if (t.op == StepOp::kReduceScatter) return packed;
  return packed + UnpackedElements(mesh, from, t, shape, extents, n);
}

}  // namespace reshard
