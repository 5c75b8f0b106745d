// The edges of the optimal search's graph (docs/DESIGN.md §3.2): from a state,
// every legal single-dim step, plus all_gather/all_to_all on every usable
// suffix of a shard order, all_reduce on every usable set of Partial dims
// and reduce_scatter on every usable arrangement of them. Size-1 mesh dims
// only ever drop to R on their own; where the cost model prices collectives
// on one rank, they also fold into other collectives (the group keeps its
// ranks and their order, and one step less is paid). The order of the
// edges is fixed (the search breaks its last ties by it).
#ifndef RESHARD_PLANNER_SEARCH_SEARCH_EDGES_H_
#define RESHARD_PLANNER_SEARCH_SEARCH_EDGES_H_

#include <array>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"
#include "planner/search/flatten_policy.h"

namespace reshard {

// An EdgeGenerator enumerates the edges of one search. It keeps references
// to the `mesh` and `dst` it was built with, which must outlive it, and
// caches reduction groups per Partial-dim mask, so it is not thread-safe:
// each search builds its own.
class EdgeGenerator {
 public:
  // `src` and `dst` decide which Partial ops local steps may create;
  // `fold_unit_dims`: size-1 dims may join other collectives' groups
  // (CostModel::PricesOneRankCollectives).
  EdgeGenerator(const Mesh& mesh, const DistState& src, const DistState& dst,
                int tensor_rank, FlattenPolicy policy, bool fold_unit_dims);

  // Calls `emit` with every legal edge out of `s` (the transition and the
  // state it leads to; `emit` may move from the state). No edge list is
  // built: searches expand many states.
  using Emit = absl::FunctionRef<void(const Transition&, DistState&)>;
  void Expand(const DistState& s, Emit emit);

 private:
  // The effective shard orders of a state (size-1 dims hold no split),
  // outermost first, one slot per sharded tensor dim in tensor dim order;
  // and its Partial dims.
  struct ShardOrders {
    std::array<Group, kMaxMeshDims> mesh_dims;
    std::array<int, kMaxMeshDims> tensor_dim;
    int count = 0;
    int partial_mask = 0;
  };
  void FindShardOrders(const DistState& s, ShardOrders& orders) const;

  // The edges out of `s` by kind, in the order Expand emits them:
  // all_gather and all_to_all on every usable suffix of every order;
  // all_reduce on every usable set of Partial dims and reduce_scatter on
  // every usable arrangement; chunk and partition on single dims of size
  // > 1; shard_to_partial towards P(sum) targets; size-1 dims only ever
  // drop to R (it unblocks partial mixes for free).
  void GatherAndAllToAllEdges(const DistState& s, const ShardOrders& orders,
                              Emit emit) const;
  // all_gather and all_to_all on the suffixes (two dims or more) of the
  // full shard orders, size-1 dims included, that hold a size-1 dim.
  void UnitFoldedGatherEdges(const DistState& s, Emit emit) const;
  // all_gather of tensor dim `a` on `group`, and all_to_all to each other
  // tensor dim, when the policy allows the group.
  void GatherOnGroup(const DistState& s, const Group& group, int a,
                     Emit emit) const;
  void ReductionEdges(const DistState& s, int partial_mask, Emit emit);
  void LocalEdges(const DistState& s, Emit emit) const;
  void ShardToPartialEdges(const DistState& s, const ShardOrders& orders,
                           Emit emit) const;
  void UnitDimEdges(const DistState& s, Emit emit) const;

  struct ReduceGroup {
    Group group;
    bool all_reduce;  // the set matters for all_reduce, not the order
  };

  // The groups a reduction may use from a state whose Partial dims are
  // `partial_mask` (computed once per mask).
  const std::vector<ReduceGroup>& ReduceGroups(const DistState& s,
                                               int partial_mask);
  // Adds to `groups` every subset of the size-1 Partial dims `units`
  // folded into each ascending group of `groups`, or alone (two or more),
  // in ascending order.
  void FoldUnitDims(const Group& units, std::vector<Group>& groups) const;

  const Mesh& mesh_;
  const DistState& dst_;
  int tensor_rank_;
  FlattenPolicy policy_;
  bool fold_unit_dims_;
  std::vector<ReduceOp> partial_ops_;
  std::vector<std::optional<std::vector<ReduceGroup>>> reduce_groups_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_SEARCH_EDGES_H_
