// The edges of the optimal search's graph (DESIGN §3.2): from a state,
// every legal single-dim step, plus all_gather/all_to_all on every usable
// suffix of a shard order, all_reduce on every usable set of Partial dims
// and reduce_scatter on every usable arrangement of them. Size-1 mesh dims
// only ever drop to R. The order of the edges is fixed (the search breaks
// its last ties by it).
#ifndef RESHARD_PLANNER_SEARCH_EDGES_H_
#define RESHARD_PLANNER_SEARCH_EDGES_H_

#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "planner/dist_state.h"
#include "planner/flatten_policy.h"
#include "planner/mesh.h"
#include "planner/step.h"

namespace reshard {

class EdgeGenerator {
 public:
  // `src` and `dst` decide which Partial ops local steps may create.
  EdgeGenerator(const Mesh& mesh, const DistState& src, const DistState& dst,
                int tensor_rank, FlattenPolicy policy);

  // Calls `emit` with every legal edge out of `s` (the transition and the
  // state it leads to; `emit` may move from the state). No edge list is
  // built: searches expand many states.
  using Emit = absl::FunctionRef<void(const Transition&, DistState&)>;
  void Expand(const DistState& s, Emit emit);

 private:
  struct ReduceGroup {
    Group group;
    bool all_reduce;  // the set matters for all_reduce, not the order
  };

  bool Usable(const Group& g) const;
  // The groups a reduction may use from a state whose Partial dims are
  // `partial_mask` (computed once per mask).
  const std::vector<ReduceGroup>& ReduceGroups(const DistState& s,
                                               int partial_mask);

  const Mesh& mesh_;
  const DistState& dst_;
  int tensor_rank_;
  FlattenPolicy policy_;
  std::vector<ReduceOp> partial_ops_;
  std::vector<std::optional<std::vector<ReduceGroup>>> reduce_groups_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_EDGES_H_
