#include "planner/cost/plan_memory.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "planner/batch/bucket_layout.h"
#include "planner/core/local_layout.h"
#include "planner/core/step_layout.h"
#include "planner/core/step_memory.h"

namespace reshard {
namespace {

// Marks the mesh dims on which `step`'s layout can differ between ranks:
// those that shard the tensor before or after it, and its group's.
void MarkLayoutDims(const Step& step, std::vector<bool>& dims) {
  for (size_t m = 0; m < dims.size(); ++m) {
    const int dim = static_cast<int>(m);
    if (step.from.placement(dim).is_shard() ||
        step.to.placement(dim).is_shard()) {
      dims[m] = true;
    }
  }
  for (int m : step.group) dims[m] = true;
}

// How many ranks have distinct layouts: every coordinate of the marked
// dims (0 on the others).
int64_t DistinctRanks(const Mesh& mesh, const std::vector<bool>& dims) {
  int64_t ranks = 1;
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (dims[m]) ranks *= mesh.size(m);
  }
  return ranks;
}

// The largest `live(position, peak so far)` over those ranks, which none
// exceeds `ceiling`: the ranks are visited from coordinate 0 (the largest
// parts) on, and the first to reach the ceiling ends the walk. `live` may
// answer any value up to the peak so far for a rank that cannot exceed it.
template <typename Live>
int64_t MaxOverRanks(const Mesh& mesh, const std::vector<bool>& dims,
                     int64_t ceiling, Live live) {
  std::vector<int64_t> coord(mesh.ndim(), 0);
  int64_t peak = 0;
  for (;;) {
    int64_t position = 0;
    for (int m = 0; m < mesh.ndim(); ++m) position += coord[m] * mesh.Stride(m);
    peak = std::max(peak, live(position, peak));
    if (peak >= ceiling) return peak;
    int m = mesh.ndim() - 1;
    while (m >= 0 && (!dims[m] || ++coord[m] == mesh.size(m))) {
      coord[m--] = 0;
    }
    if (m < 0) return peak;
  }
}

// True when every rank holds a tensor of the same extents under `state`:
// each tensor dim's extent divides by the sizes of the mesh dims sharding
// it, so every nested torch.chunk split is even.
bool EvenlySplit(const Mesh& mesh, const DistState& state,
                 const std::vector<int64_t>& shape) {
  std::vector<int64_t> parts(shape.size(), 1);
  for (int m = 0; m < mesh.ndim(); ++m) {
    const Placement& p = state.placement(m);
    if (p.is_shard()) parts[p.dim()] *= mesh.size(m);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] % parts[d] != 0) return false;
  }
  return true;
}

bool EvenStep(const Mesh& mesh, const Plan& plan, const Step& step) {
  return EvenlySplit(mesh, step.from, plan.tensor.shape()) &&
         EvenlySplit(mesh, step.to, plan.tensor.shape());
}

// A block split along `d` of a tensor of `shape` is one contiguous run
// when every dim before `d` has extent 1.
bool RunsAlong(absl::Span<const int64_t> shape, std::optional<int> d) {
  if (!d.has_value()) return false;
  for (int k = 0; k < *d; ++k) {
    if (shape[k] != 1) return false;
  }
  return true;
}

// A step's sizes on the largest rank (coordinate 0 everywhere: part 0 of
// a chunk is the largest), from extents alone. When the step is evenly
// split every rank has these sizes and every member's part fills its
// block, so the direct paths reduce to RunsAlong (step_memory.h decides
// them from the boxes); otherwise no path is taken in place: a bound.
struct Sizes {
  int64_t tensors = 0;  // input and output bytes
  int64_t block = 0;    // bytes of the padded block
  DirectPaths direct;
};
Sizes LargestRank(const Mesh& mesh, const Plan& plan, const Step& step,
                  bool even) {
  const std::vector<int64_t>& shape = plan.tensor.shape();
  const std::vector<int64_t> in = MaxLocalExtents(mesh, step.from, shape);
  const std::vector<int64_t> out = MaxLocalExtents(mesh, step.to, shape);
  const int64_t itemsize = plan.tensor.itemsize();
  Sizes sizes;
  sizes.tensors = (Numel(in) + Numel(out)) * itemsize;
  if (IsCollective(step.op)) {
    sizes.block = PaddedBlockNumel(mesh, step.transition(), in) * itemsize;
  }
  if (even) {
    sizes.direct = {RunsAlong(in, step.dst_tensor_dim),
                    RunsAlong(out, step.src_tensor_dim)};
  }
  return sizes;
}

// A rank's extents, on the stack for tensors of rank <= 8.
using Extents = absl::InlinedVector<int64_t, 8>;

// The live bytes of the rank at `position` in `step` with none of its
// paths in place, from extents alone: exact when none can lie in place (a
// part along a dim that an earlier dim of extent > 1 precedes is never one
// contiguous run), else an upper bound that its layout may lower.
struct RankBytes {
  int64_t most = 0;
  bool exact = true;
};
RankBytes WithoutDirectPaths(const Mesh& mesh, const Plan& plan,
                             const Step& step, int64_t position) {
  const std::vector<int64_t>& shape = plan.tensor.shape();
  Extents in(shape.size()), out(shape.size());
  LocalExtents(mesh, step.from, shape, position, absl::MakeSpan(in));
  LocalExtents(mesh, step.to, shape, position, absl::MakeSpan(out));
  const bool sends_split =
      step.op == StepOp::kReduceScatter || step.op == StepOp::kAllToAll;
  const bool receives_stacked =
      step.op == StepOp::kAllGather || step.op == StepOp::kAllToAll;
  RankBytes bytes;
  bytes.exact = !(sends_split && RunsAlong(in, step.dst_tensor_dim)) &&
                !(receives_stacked && RunsAlong(out, step.src_tensor_dim));
  const int64_t itemsize = plan.tensor.itemsize();
  bytes.most = (Numel(in) + Numel(out)) * itemsize;
  if (!IsCollective(step.op)) return bytes;
  // The group's member 0 (its coordinates on the group's dims 0) holds
  // the largest block.
  const int64_t first = mesh.GroupBase(position, step.group);
  Extents largest = in;
  if (first != position) {
    LocalExtents(mesh, step.from, shape, first, absl::MakeSpan(largest));
  }
  const int64_t block = PaddedBlockNumel(mesh, step.transition(), largest);
  const WireUse wire = StepWireOf(step.op, mesh.GroupSize(step.group), block,
                                  Numel(out), {}, itemsize);
  bytes.most += wire.in + wire.out;
  return bytes;
}

int64_t StepPeakBytes(const Mesh& mesh, const Plan& plan, const Step& step) {
  std::vector<bool> dims(mesh.ndim(), false);
  MarkLayoutDims(step, dims);
  const int64_t n = mesh.GroupSize(step.group);
  const bool even = EvenStep(mesh, plan, step);
  const Sizes s = LargestRank(mesh, plan, step, even);
  const WireUse wire = CollectiveWire(step.op, n, s.block, s.direct, !even);
  const int64_t bound = s.tensors + wire.in + wire.out;
  if (even || DistinctRanks(mesh, dims) > kExactPeakWork / n) return bound;
  return MaxOverRanks(mesh, dims, bound, [&](int64_t p, int64_t peak) {
    // A rank whose bound stays within the peak so far cannot raise it.
    const RankBytes bytes = WithoutDirectPaths(mesh, plan, step, p);
    if (bytes.exact || bytes.most <= peak) return bytes.most;
    return StepLiveBytes(step.op,
                         MakeStepLayout(mesh, plan.tensor.shape(), step, p),
                         plan.tensor.itemsize());
  });
}

int64_t BucketPeakBytes(const Mesh& mesh, const Bucket& bucket,
                        absl::Span<const Plan* const> plans) {
  std::vector<bool> dims(mesh.ndim(), false);
  bool even = true;
  for (const BucketMember& m : bucket.members) {
    const Step& step = plans[m.tensor]->steps[m.step];
    MarkLayoutDims(step, dims);
    even = even && EvenStep(mesh, *plans[m.tensor], step);
  }
  const int64_t n = mesh.GroupSize(bucket.group);
  const int64_t boxes = static_cast<int64_t>(bucket.members.size()) * n;
  Sizes sum;
  for (const BucketMember& m : bucket.members) {
    const Sizes s = LargestRank(mesh, *plans[m.tensor],
                                plans[m.tensor]->steps[m.step], false);
    sum.tensors += s.tensors;
    sum.block += s.block;
  }
  const WireUse wire = PackedWire(bucket.op, n, sum.block);
  const int64_t bound = sum.tensors + wire.in + wire.out;
  if (even || DistinctRanks(mesh, dims) > kExactPeakWork / boxes) return bound;
  return MaxOverRanks(mesh, dims, bound, [&](int64_t p, int64_t) {
    return BucketLiveBytes(bucket.op, MakeBucketLayout(mesh, bucket, plans, p));
  });
}

// A tensor no step moves: the runner copies its source (largest on the
// rank at coordinate 0) to its output.
int64_t ThroughBytes(const Mesh& mesh, const Plan& plan) {
  const Box box = LocalBox(mesh, plan.src, plan.tensor.shape(), 0);
  return 2 * box.numel() * plan.tensor.itemsize();
}

bool MovesData(const Mesh& mesh, const Plan& plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [&](const Step& s) {
    return mesh.GroupSize(s.group) > 1;
  });
}

}  // namespace

PeakAt PlanPeak(const Mesh& mesh, const Plan& plan) {
  if (!MovesData(mesh, plan)) return {ThroughBytes(mesh, plan), -1};
  PeakAt peak;
  for (size_t j = 0; j < plan.steps.size(); ++j) {
    const Step& step = plan.steps[j];
    if (mesh.GroupSize(step.group) == 1) continue;
    const int64_t bytes = StepPeakBytes(mesh, plan, step);
    if (peak.step < 0 || bytes > peak.bytes) {
      peak = {bytes, static_cast<int>(j)};
    }
  }
  return peak;
}

int64_t BatchPeakBytes(const Mesh& mesh, absl::Span<const Plan* const> plans,
                       const BucketSchedule& schedule) {
  int64_t peak = 0;
  for (const Plan* plan : plans) {
    if (plan == nullptr) continue;
    if (!MovesData(mesh, *plan)) {
      peak = std::max(peak, ThroughBytes(mesh, *plan));
      continue;
    }
    for (const Step& step : plan->steps) {
      if (mesh.GroupSize(step.group) > 1 && !IsCollective(step.op)) {
        peak = std::max(peak, StepPeakBytes(mesh, *plan, step));
      }
    }
  }
  for (const Bucket& bucket : schedule.buckets) {
    const BucketMember& first = bucket.members[0];
    peak = std::max(peak,
                    bucket.members.size() == 1
                        ? StepPeakBytes(mesh, *plans[first.tensor],
                                        plans[first.tensor]->steps[first.step])
                        : BucketPeakBytes(mesh, bucket, plans));
  }
  return peak;
}

}  // namespace reshard
