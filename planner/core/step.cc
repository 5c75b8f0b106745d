#include "planner/core/step.h"

#include <algorithm>
#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/core/enum_names.h"

namespace reshard {
namespace {

absl::Status Illegal(const DistState& from, const Transition& t,
                     absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      StepOpName(t.op), " on mesh dims [", absl::StrJoin(t.group, ","),
      "] from ", from.ToString(), ": ", why));
}

// Pops `group` off the end of `tensor_dim`'s shard order. The group must be
// the order's suffix in the group's order once size-1 mesh dims are ignored.
absl::Status PopSuffix(const Mesh& mesh, DistState& state, int tensor_dim,
                       const Transition& t) {
  std::vector<int> order = state.ShardOrder(tensor_dim);
  std::vector<int> effective;
  for (int m : order) {
    if (mesh.size(m) > 1) effective.push_back(m);
  }
  std::vector<int> group_effective;
  for (int m : t.group) {
    if (mesh.size(m) > 1) group_effective.push_back(m);
  }
  if (group_effective.size() > effective.size() ||
      !std::equal(group_effective.begin(), group_effective.end(),
                  effective.end() - group_effective.size())) {
    return Illegal(
        state, t,
        absl::StrCat("the group must be the last mesh dims of S(", tensor_dim,
                     ")'s shard order [", absl::StrJoin(order, ","), "]"));
  }
  for (int m : t.group) state.SetReplicate(m);
  return absl::OkStatus();
}

}  // namespace

absl::string_view StepOpName(StepOp op) {
  // In the order of StepOp's values.
  static constexpr std::array<absl::string_view, 7> kNames = {
      "all_gather", "all_reduce", "reduce_scatter",  "all_to_all",
      "chunk",      "partition",  "shard_to_partial"};
  return EnumName(op, kNames);
}

bool IsCollective(StepOp op) {
  return op == StepOp::kAllGather || op == StepOp::kAllReduce ||
         op == StepOp::kReduceScatter || op == StepOp::kAllToAll;
}

bool UsesReduceOp(StepOp op) {
  return op != StepOp::kAllGather && op != StepOp::kAllToAll &&
         op != StepOp::kChunk;
}

std::optional<StepOp> InferOp(const Placement& src, const Placement& dst) {
  if (src.is_shard()) {
    if (dst.is_replicate()) return StepOp::kAllGather;
    if (dst.is_shard()) return StepOp::kAllToAll;
    return StepOp::kShardToPartial;
  }
  if (src.is_partial()) {
    if (dst.is_replicate()) return StepOp::kAllReduce;
    if (dst.is_shard()) return StepOp::kReduceScatter;
    return std::nullopt;
  }
  if (dst.is_shard()) return StepOp::kChunk;
  if (dst.is_partial()) return StepOp::kPartition;
  return std::nullopt;
}

namespace {

// Every dim of the group must hold the op's source kind: S(a) for the ops
// from S, compatible Partials for reductions, R for the local ops from R.
absl::Status CheckSources(const DistState& from, const Transition& t) {
  std::optional<ReduceOp> reduce;
  for (int m : t.group) {
    const Placement& p = from.placement(m);
    bool ok = false;
    switch (t.op) {
      case StepOp::kAllGather:
      case StepOp::kAllToAll:
      case StepOp::kShardToPartial:
        ok = t.src_tensor_dim.has_value() &&
             p == Placement::Shard(*t.src_tensor_dim);
        break;
      case StepOp::kAllReduce:
      case StepOp::kReduceScatter:
        ok = p.is_partial() &&
             (!reduce.has_value() || PartialOpsCompatible(*reduce, p.op()));
        reduce = p.op();
        break;
      case StepOp::kChunk:
      case StepOp::kPartition:
        ok = p.is_replicate();
        break;
    }
    if (!ok) {
      return Illegal(from, t,
                     absl::StrCat("mesh dim ", m, " holds ", p.ToString()));
    }
  }
  return absl::OkStatus();
}

// The ops to S(b) need b; all_to_all needs b != a.
absl::Status CheckTensorDims(const DistState& from, const Transition& t) {
  const bool needs_dst = t.op == StepOp::kReduceScatter ||
                         t.op == StepOp::kAllToAll || t.op == StepOp::kChunk;
  if (needs_dst && !t.dst_tensor_dim.has_value()) {
    return Illegal(from, t, "missing destination tensor dim");
  }
  if (t.op == StepOp::kAllToAll && *t.dst_tensor_dim == *t.src_tensor_dim) {
    return Illegal(from, t, "all_to_all needs two different tensor dims");
  }
  return absl::OkStatus();
}

// Gives every dim of the group its target placement (the ops from S have
// already popped the group off the shard order).
void PlaceTargets(const Transition& t, DistState& to) {
  for (int m : t.group) {
    switch (t.op) {
      case StepOp::kAllGather:
      case StepOp::kAllReduce:
        to.SetReplicate(m);
        break;
      case StepOp::kReduceScatter:
      case StepOp::kAllToAll:
      case StepOp::kChunk:
        to.AppendShard(m, *t.dst_tensor_dim);
        break;
      case StepOp::kPartition:
        to.SetPartial(m, t.target_op);
        break;
      case StepOp::kShardToPartial:
        to.SetPartial(m, ReduceOp::kSum);
        break;
    }
  }
}

bool SourceIsShard(StepOp op) {
  return op == StepOp::kAllGather || op == StepOp::kAllToAll ||
         op == StepOp::kShardToPartial;
}

}  // namespace

absl::StatusOr<DistState> Apply(const Mesh& mesh, const DistState& from,
                                const Transition& t) {
  absl::Status valid = mesh.ValidateGroup(t.group, "step.group");
  if (!valid.ok()) return valid;
  if (from.mesh_ndim() != mesh.ndim()) {
    return Illegal(from, t, "state and mesh have different dim counts");
  }
  if (absl::Status s = CheckSources(from, t); !s.ok()) return s;
  if (absl::Status s = CheckTensorDims(from, t); !s.ok()) return s;
  DistState to = from;
  if (SourceIsShard(t.op)) {
    absl::Status s = PopSuffix(mesh, to, *t.src_tensor_dim, t);
    if (!s.ok()) return s;
  }
  PlaceTargets(t, to);
  if (!to.HasAllowedPartialMix()) {
    return Illegal(from, t, "it would mix Partial ops other than sum/avg");
  }
  return to;
}

Transition Step::transition() const {
  Transition t;
  t.op = op;
  t.group = group;
  t.src_tensor_dim = src_tensor_dim;
  t.dst_tensor_dim = dst_tensor_dim;
  t.target_op = reduce_op;
  return t;
}

bool Step::IsCommunicating(const Mesh& mesh) const {
  return IsCollective(op) && mesh.GroupSize(group) > 1;
}

bool Step::SameAction(const Step& o) const {
  return op == o.op && group == o.group && src_tensor_dim == o.src_tensor_dim &&
         dst_tensor_dim == o.dst_tensor_dim && reduce_op == o.reduce_op &&
         avg_divisor == o.avg_divisor && from == o.from && to == o.to;
}

namespace {

// The reduction of an all_reduce/reduce_scatter over `group` from `from`:
// the Partials' op, except that a {sum, avg} mix reduces as a sum and then
// divides by the product of the avg dims' sizes.
void SetReduction(const Mesh& mesh, const DistState& from, Step& step) {
  bool any_avg = false;
  bool any_sum = false;
  int64_t avg_size = 1;
  for (int m : step.group) {
    const Placement& p = from.placement(m);
    if (p.is_partial() && p.op() == ReduceOp::kAvg) {
      any_avg = true;
      avg_size *= mesh.size(m);
    } else if (p.is_partial() && p.op() == ReduceOp::kSum) {
      any_sum = true;
    }
  }
  step.reduce_op = from.placement(step.group[0]).op();
  if (any_avg && any_sum) {
    step.reduce_op = ReduceOp::kSum;
    step.avg_divisor = avg_size;
  }
}

}  // namespace

absl::StatusOr<Step> MakeStep(const Mesh& mesh, const DistState& from,
                              const DistState& to, Group group) {
  absl::Status valid = mesh.ValidateGroup(group, "step.group");
  if (!valid.ok()) return valid;
  const Placement src = from.placement(group[0]);
  const Placement dst = to.placement(group[0]);
  const std::optional<StepOp> op = InferOp(src, dst);
  if (!op.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no step turns ", src.ToString(), " into ", dst.ToString()));
  }
  Step step;
  step.op = *op;
  step.group = std::move(group);
  step.from = from;
  step.to = to;
  if (src.is_shard()) step.src_tensor_dim = src.dim();
  if (dst.is_shard()) step.dst_tensor_dim = dst.dim();
  if (step.op == StepOp::kPartition) step.reduce_op = dst.op();
  if (step.op == StepOp::kAllReduce || step.op == StepOp::kReduceScatter) {
    SetReduction(mesh, from, step);
  }
  absl::StatusOr<DistState> applied = Apply(mesh, from, step.transition());
  if (!applied.ok()) return applied.status();
  if (*applied != to) {
    return absl::InvalidArgumentError(absl::StrCat(
        StepOpName(step.op), " on mesh dims [", absl::StrJoin(step.group, ","),
        "] turns ", from.ToString(), " into ", applied->ToString(), ", not ",
        to.ToString()));
  }
  return step;
}

}  // namespace reshard
