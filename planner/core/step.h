// A Step is one collective (or local) operation of a plan: it acts on one
// group of mesh dims and changes the placements of exactly those dims
// (docs/DESIGN.md §2.3). Steps are values: Apply() maps a DistState to the next
// one, and the simulator, the cost models and the executor all read the same
// fields.
#ifndef RESHARD_PLANNER_CORE_STEP_H_
#define RESHARD_PLANNER_CORE_STEP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"

namespace reshard {

enum class StepOp {
  kAllGather,      // S(a) -> R
  kAllReduce,      // P -> R
  kReduceScatter,  // P -> S(b)
  kAllToAll,       // S(a) -> S(b)
  kChunk,          // R -> S(b), local
  kPartition,      // R -> P(op), local
  kShardToPartial  // S(a) -> P(sum), local
};

// "all_gather", "all_reduce", ...
absl::string_view StepOpName(StepOp op);
// True for the four collectives.
bool IsCollective(StepOp op);
// True when a step of `op` has a meaningful Step::reduce_op: the reduction
// of all_reduce and reduce_scatter, the target op of partition, sum for
// shard_to_partial. False for all_gather, all_to_all and chunk, which move
// data without reducing it.
bool UsesReduceOp(StepOp op);

// The op that turns placement `src` into `dst` on a mesh dim (docs/DESIGN.md
// §2.3); nullopt for R -> R and P -> P. The op alone does not say whether the
// step is legal in a given state (S(a) -> S(a) gives an all_to_all that Apply
// refuses).
std::optional<StepOp> InferOp(const Placement& src, const Placement& dst);

// What a step does, independent of the state it starts from.
struct Transition {
  StepOp op = StepOp::kAllGather;
  Group group;
  std::optional<int> src_tensor_dim;    // a of S(a) sources.
  std::optional<int> dst_tensor_dim;    // b of S(b) targets.
  ReduceOp target_op = ReduceOp::kSum;  // P(op) targets (partition).
};

// Applies `t` to `from`. INVALID_ARGUMENT when `t` is not legal there: wrong
// source placements, a gathered/moved group that is not the suffix of the
// shard order (size-1 mesh dims are exempt), or a forbidden partial mix.
absl::StatusOr<DistState> Apply(const Mesh& mesh, const DistState& from,
                                const Transition& t);

// A step of a plan: a Transition (its first five fields, with `reduce_op`
// standing for Transition::target_op; transition() reads them back), the
// states before and after, and its costs. The Transition is not a member
// because every consumer (simulator, cost models, formatters, proto
// conversion, executors) reads these fields by name.
struct Step {
  StepOp op = StepOp::kAllGather;
  Group group;  // mesh dims in the group's order
  std::optional<int> src_tensor_dim;
  std::optional<int> dst_tensor_dim;
  // The reduction of all_reduce/reduce_scatter, the target op of partition,
  // sum for shard_to_partial; unused (sum) otherwise.
  ReduceOp reduce_op = ReduceOp::kSum;
  // {sum,avg} mixes reduce as a sum, then divide by this.
  int64_t avg_divisor = 1;
  DistState from;
  DistState to;
  int64_t bytes = 0;
  double time_us = 0;

  // The transition this step performs.
  Transition transition() const;
  // True when the step moves data between ranks (a collective on a group of
  // size > 1).
  bool IsCommunicating(const Mesh& mesh) const;
  bool SameAction(const Step& other) const;  // everything but costs.
};

// Builds the step that turns `from` into `to` on `group`, inferring the op,
// tensor dims, reduce op and avg divisor. INVALID_ARGUMENT when no single
// step does that. Costs are left zero.
absl::StatusOr<Step> MakeStep(const Mesh& mesh, const DistState& from,
                              const DistState& to, Group group);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_STEP_H_
