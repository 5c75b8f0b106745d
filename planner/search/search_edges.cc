#include "planner/search/search_edges.h"

#include <algorithm>
#include <array>

#include "absl/base/attributes.h"

namespace reshard {
namespace {

// Every ordered arrangement of every subset of `dims` with >= 2 elements.
void Arrangements(const Group& dims, std::vector<Group>& out) {
  const int n = static_cast<int>(dims.size());
  for (int mask = 0; mask < (1 << n); ++mask) {
    if (__builtin_popcount(mask) < 2) continue;
    Group g;
    for (int i = 0; i < n; ++i) {
      if (mask & (1 << i)) g.push_back(dims[i]);
    }
    do {
      out.push_back(g);
    } while (std::next_permutation(g.begin(), g.end()));
  }
}

}  // namespace

EdgeGenerator::EdgeGenerator(const Mesh& mesh, const DistState& src,
                             const DistState& dst, int tensor_rank,
                             FlattenPolicy policy, bool fold_unit_dims)
    : mesh_(mesh),
      dst_(dst),
      tensor_rank_(tensor_rank),
      policy_(policy),
      fold_unit_dims_(fold_unit_dims && policy != FlattenPolicy::kNone),
      partial_ops_(PartialOpsIn(src, dst)),
      reduce_groups_(size_t{1} << mesh.ndim()) {}

// The phases of Expand are forced inline: it runs for every expanded state,
// and as calls they cost instructions there.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void EdgeGenerator::FindShardOrders(
    const DistState& s, ShardOrders& orders) const {
  for (int m = 0; m < s.mesh_ndim(); ++m) {
    const Placement& p = s.placement(m);
    if (p.is_partial()) orders.partial_mask |= 1 << m;
    if (!p.is_shard() || mesh_.size(m) == 1) continue;
    int slot = 0;
    while (slot < orders.count && orders.tensor_dim[slot] != p.dim()) ++slot;
    if (slot == orders.count) {
      orders.tensor_dim[orders.count] = p.dim();
      orders.mesh_dims[orders.count++].clear();
    }
    orders.mesh_dims[slot].push_back(m);
  }
  // Slots in tensor dim order (the order shard_to_partial edges come in).
  for (int i = 1; i < orders.count; ++i) {
    for (int j = i; j > 0 && orders.tensor_dim[j - 1] > orders.tensor_dim[j];
         --j) {
      std::swap(orders.tensor_dim[j - 1], orders.tensor_dim[j]);
      std::swap(orders.mesh_dims[j - 1], orders.mesh_dims[j]);
    }
  }
  for (int i = 0; i < orders.count; ++i) {
    Group& order = orders.mesh_dims[i];
    std::sort(order.begin(), order.end(), [&](int x, int y) {
      return s.order_index(x) < s.order_index(y);
    });
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void EdgeGenerator::GatherAndAllToAllEdges(
    const DistState& s, const ShardOrders& orders, Emit emit) const {
  for (int slot = 0; slot < orders.count; ++slot) {
    const int a = orders.tensor_dim[slot];
    const Group& order = orders.mesh_dims[slot];
    for (size_t k = 1; k <= order.size(); ++k) {
      GatherOnGroup(s, Group(order.end() - k, order.end()), a, emit);
    }
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void EdgeGenerator::GatherOnGroup(
    const DistState& s, const Group& group, int a, Emit emit) const {
  if (!GroupAllowed(mesh_, policy_, group)) return;
  Transition t{StepOp::kAllGather, group, a, std::nullopt};
  DistState popped = s;
  for (int m : t.group) popped.SetReplicate(m);
  {
    DistState to = popped;
    emit(t, to);
  }
  t.op = StepOp::kAllToAll;
  for (int b = 0; b < tensor_rank_; ++b) {
    if (b == a) continue;
    DistState to = popped;
    for (int m : t.group) to.AppendShard(m, b);
    t.dst_tensor_dim = b;
    emit(t, to);
  }
}

void EdgeGenerator::UnitFoldedGatherEdges(const DistState& s, Emit emit) const {
  for (int a = 0; a < tensor_rank_; ++a) {
    Group full;  // the mesh dims sharding tensor dim a, size-1 ones included
    bool units = false;
    for (int m = 0; m < s.mesh_ndim(); ++m) {
      if (s.placement(m) != Placement::Shard(a)) continue;
      full.push_back(m);
      units = units || mesh_.size(m) == 1;
    }
    if (!units) continue;
    std::sort(full.begin(), full.end(), [&](int x, int y) {
      return s.order_index(x) < s.order_index(y);
    });
    for (size_t k = 2; k <= full.size(); ++k) {
      const Group suffix(full.end() - k, full.end());
      if (std::any_of(suffix.begin(), suffix.end(),
                      [&](int m) { return mesh_.size(m) == 1; })) {
        GatherOnGroup(s, suffix, a, emit);
      }
    }
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void EdgeGenerator::ReductionEdges(
    const DistState& s, int partial_mask, Emit emit) {
  for (const ReduceGroup& r : ReduceGroups(s, partial_mask)) {
    Transition t{StepOp::kAllReduce, r.group, std::nullopt, std::nullopt};
    if (r.all_reduce) {
      DistState to = s;
      for (int m : r.group) to.SetReplicate(m);
      emit(t, to);
    }
    t.op = StepOp::kReduceScatter;
    for (int b = 0; b < tensor_rank_; ++b) {
      DistState to = s;
      for (int m : r.group) to.AppendShard(m, b);
      t.dst_tensor_dim = b;
      emit(t, to);
    }
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void EdgeGenerator::LocalEdges(
    const DistState& s, Emit emit) const {
  for (int m = 0; m < s.mesh_ndim(); ++m) {
    if (mesh_.size(m) == 1 || !s.placement(m).is_replicate()) continue;
    Transition t{StepOp::kChunk, {m}, std::nullopt, std::nullopt};
    for (int b = 0; b < tensor_rank_; ++b) {
      DistState to = s;
      to.AppendShard(m, b);
      t.dst_tensor_dim = b;
      emit(t, to);
    }
    t.op = StepOp::kPartition;
    t.dst_tensor_dim.reset();
    for (ReduceOp op : partial_ops_) {
      DistState to = s;
      to.SetPartial(m, op);
      if (to.HasAllowedPartialMix()) {
        t.target_op = op;
        emit(t, to);
      }
    }
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void EdgeGenerator::ShardToPartialEdges(
    const DistState& s, const ShardOrders& orders, Emit emit) const {
  for (int i = 0; i < orders.count; ++i) {
    const int m = orders.mesh_dims[i].back();
    if (dst_.placement(m) != Placement::Partial(ReduceOp::kSum)) continue;
    DistState to = s;
    to.SetPartial(m, ReduceOp::kSum);
    if (to.HasAllowedPartialMix()) {
      emit(
          Transition{
              StepOp::kShardToPartial, {m}, orders.tensor_dim[i], std::nullopt},
          to);
    }
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void EdgeGenerator::UnitDimEdges(
    const DistState& s, Emit emit) const {
  for (int m = 0; m < s.mesh_ndim(); ++m) {
    if (mesh_.size(m) > 1 || s.placement(m).is_replicate()) continue;
    DistState to = s;
    to.SetReplicate(m);
    const Placement p = s.placement(m);
    if (p.is_shard()) {
      emit(Transition{StepOp::kAllGather, {m}, p.dim(), std::nullopt}, to);
    } else {
      emit(Transition{StepOp::kAllReduce, {m}, std::nullopt, std::nullopt}, to);
    }
  }
}

void EdgeGenerator::Expand(const DistState& s, Emit emit) {
  ShardOrders orders;
  FindShardOrders(s, orders);
  GatherAndAllToAllEdges(s, orders, emit);
  if (fold_unit_dims_) UnitFoldedGatherEdges(s, emit);
  ReductionEdges(s, orders.partial_mask, emit);
  LocalEdges(s, emit);
  ShardToPartialEdges(s, orders, emit);
  UnitDimEdges(s, emit);
}

const std::vector<EdgeGenerator::ReduceGroup>& EdgeGenerator::ReduceGroups(
    const DistState& s, int partial_mask) {
  std::optional<std::vector<ReduceGroup>>& cached =
      reduce_groups_[partial_mask];
  if (cached.has_value()) return *cached;
  Group partial_dims;
  for (int m = 0; m < s.mesh_ndim(); ++m) {
    if ((partial_mask & (1 << m)) && mesh_.size(m) > 1)
      partial_dims.push_back(m);
  }
  std::vector<Group> groups;
  for (int m : partial_dims) groups.push_back({m});
  if (policy_ == FlattenPolicy::kAny) Arrangements(partial_dims, groups);
  if (policy_ != FlattenPolicy::kNone) {
    // Registered groups may include size-1 dims, which `any` arrangements
    // skip: keep them so that `any` is never worse than `existing`. A
    // registered group serves its dims of size > 1 alone as well (the same
    // ranks in the same order), which may be partial where the rest is not.
    auto partial = [&](int m) { return (partial_mask & (1 << m)) != 0; };
    for (const Group& g : mesh_.flattened()) {
      if (std::all_of(g.begin(), g.end(), partial)) groups.push_back(g);
      Group served = mesh_.WithoutUnitDims(g);
      if (served.size() >= 2 && served != g &&
          std::all_of(served.begin(), served.end(), partial) &&
          std::find(groups.begin(), groups.end(), served) == groups.end()) {
        groups.push_back(std::move(served));
      }
    }
  }
  if (fold_unit_dims_) {
    Group units;
    for (int m = 0; m < s.mesh_ndim(); ++m) {
      if ((partial_mask & (1 << m)) && mesh_.size(m) == 1) units.push_back(m);
    }
    FoldUnitDims(units, groups);
  }
  cached.emplace();
  for (Group& g : groups) {
    const bool all_reduce = policy_ != FlattenPolicy::kAny ||
                            std::is_sorted(g.begin(), g.end()) ||
                            mesh_.IsRegistered(g);
    cached->push_back({std::move(g), all_reduce});
  }
  return *cached;
}

void EdgeGenerator::FoldUnitDims(const Group& units,
                                 std::vector<Group>& groups) const {
  // Base groups: the ascending ones, and none (groups of size-1 dims only).
  std::vector<Group> bases(1);
  for (const Group& g : groups) {
    if (std::is_sorted(g.begin(), g.end())) bases.push_back(g);
  }
  for (const Group& base : bases) {
    for (int mask = 1; mask < (1 << units.size()); ++mask) {
      Group g = base;
      bool fresh = true;
      for (size_t u = 0; u < units.size(); ++u) {
        if (!(mask & (1 << u))) continue;
        fresh = fresh && std::find(g.begin(), g.end(), units[u]) == g.end();
        g.push_back(units[u]);
      }
      std::sort(g.begin(), g.end());
      if (fresh && g.size() >= 2 && GroupAllowed(mesh_, policy_, g) &&
          std::find(groups.begin(), groups.end(), g) == groups.end()) {
        groups.push_back(std::move(g));
      }
    }
  }
}

}  // namespace reshard
