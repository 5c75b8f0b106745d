#include "planner/packing_bytes.h"

#include <vector>

#include "planner/local_layout.h"

namespace reshard {
namespace {

// True when a tensor of `extents` splits along `dim` into `n` consecutive
// full runs: every dim before `dim` has extent 1 and the split is even.
bool SplitsInPlace(absl::Span<const int64_t> extents, int dim, int64_t n) {
  for (int d = 0; d < dim; ++d) {
    if (extents[d] != 1) return false;
  }
  return extents[dim] % n == 0;
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

}  // namespace

int64_t PackedElements(const Mesh& mesh, const DistState& from,
                       const Transition& t, absl::Span<const int64_t> shape,
                       absl::Span<const int64_t> extents) {
  const int64_t n = mesh.GroupSize(t.group);
  if (n == 1 || !IsCollective(t.op) || t.op == StepOp::kAllReduce) return 0;
  const int64_t in = Numel(extents);
  int64_t packed = 0;
  if (t.op != StepOp::kAllGather &&
      !SplitsInPlace(extents, *t.dst_tensor_dim, n)) {
    packed += in;  // reduce_scatter and all_to_all send blocks of the input
  }
  if (t.op == StepOp::kReduceScatter) return packed;
  // all_gather and all_to_all receive blocks into the output, whose dim `a`
  // is gathered (and, for all_to_all, dim b split).
  const int a = *t.src_tensor_dim;
  std::vector<int64_t> out(extents.begin(), extents.end());
  if (t.op == StepOp::kAllToAll) {
    const int b = *t.dst_tensor_dim;
    out[b] = (out[b] + n - 1) / n;
  }
  out[a] = GatheredExtent(mesh, from, t.group, shape, a);
  if (!SplitsInPlace(out, a, n)) packed += Numel(out);
  return packed;
}

}  // namespace reshard
