#include "planner/search/torch_greedy.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/core/plan.h"

namespace reshard {
namespace {

DistState WithPlacement(DistState state, int mesh_dim, const Placement& p) {
  if (p.is_shard()) {
    state.AppendShard(mesh_dim, p.dim());
  } else if (p.is_partial()) {
    state.SetPartial(mesh_dim, p.op());
  } else {
    state.SetReplicate(mesh_dim);
  }
  return state;
}

// FAILED_PRECONDITION for a transform PyTorch's greedy planner emits and its
// executor refuses, quoting the executor's error. On a size-1 mesh dim the
// executor skips the transform, but DTensor.redistribute refuses the
// request first (it allows no Partial target but Shard -> Partial(sum)),
// so that refusal is quoted instead.
absl::Status Unrunnable(const Mesh& mesh, const Placement& from,
                        const Placement& target, int m) {
  if (mesh.size(m) == 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "torch_greedy: PyTorch cannot redistribute ", from.ToString(), " to ",
        target.ToString(), " on mesh dim ", m, ": PyTorch ", kTorchVersion,
        "'s greedy planner plans it (its executor skips a size-1 mesh dim), "
        "but DTensor.redistribute refuses it (\"Can not redistribute from ",
        from.ToString(), " to ", target.ToString(),
        ", only Shard to Partial(sum) redistribution is supported!\"); use "
        "the optimal planner"));
  }
  const std::string refusal =
      from.is_partial()
          ? absl::StrCat("Redistribution from one partial type (",
                         from.ToRepr(), ") to another (", target.ToRepr(),
                         ") is unsupported.")
          : absl::StrCat("redistribute from ", from.ToRepr(), " to ",
                         target.ToRepr(), " not supported yet");
  return absl::FailedPreconditionError(absl::StrCat(
      "torch_greedy: PyTorch cannot redistribute ", from.ToString(), " to ",
      target.ToString(), " on mesh dim ", m, ": PyTorch ", kTorchVersion,
      "'s greedy planner plans it, but its executor refuses (\"", refusal,
      "\"); use the optimal planner"));
}

// FAILED_PRECONDITION: PyTorch's plan passes through `state`, which mixes
// P(max) or P(min) with another Partial op. Such a state's value depends on
// the order its reductions run in, which it does not record, so Reshard
// holds none (HasAllowedPartialMix).
absl::Status MixedPartialRefusal(const DistState& state) {
  return absl::FailedPreconditionError(absl::StrCat(
      "torch_greedy: PyTorch's plan passes through ", state.ToString(),
      ", which mixes Partial ops other than sum/avg: its value would depend "
      "on the order the reductions run in, so Reshard holds no such state; "
      "use the optimal planner"));
}

// Emits current[m] -> target, or explains why PyTorch cannot.
absl::Status Emit(const Mesh& mesh, DistState& current, int m,
                  const Placement& target, std::vector<Step>& steps) {
  const Placement from = current.placement(m);
  // Its executor zero-fills S -> P(sum) locally; it has no other way into
  // a Partial but from R.
  const bool shard_to_sum =
      from.is_shard() && target == Placement::Partial(ReduceOp::kSum);
  if (target.is_partial() && !from.is_replicate() && !shard_to_sum) {
    return Unrunnable(mesh, from, target, m);
  }
  const DistState next = WithPlacement(current, m, target);
  if (!next.HasAllowedPartialMix()) {
    return MixedPartialRefusal(next);
  }
  absl::StatusOr<Step> step = MakeStep(mesh, current, next, {m});
  if (!step.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "torch_greedy: PyTorch cannot plan this: ", step.status().message()));
  }
  steps.push_back(*std::move(step));
  current = next;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Step>> TorchGreedySteps(const Mesh& mesh,
                                                   const DistState& src,
                                                   const DistState& dst) {
  if (!src.HasDefaultOrder() || !dst.HasDefaultOrder()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.planner: torch_greedy needs default (ascending) shard orders, "
        "got ",
        src.ToString(), " -> ", dst.ToString(),
        "; PyTorch plans other orders with its graph planner (MakePlan does "
        "too)"));
  }
  std::vector<Step> steps;
  DistState current = src;
  const int ndim = mesh.ndim();
  if (ndim == 1) {
    if (current.placement(0) != dst.placement(0)) {
      absl::Status s = Emit(mesh, current, 0, dst.placement(0), steps);
      if (!s.ok()) return s;
    }
    return steps;
  }
  if (src.NumShards(mesh) > 1) {
    for (int i = ndim - 1; i >= 0; --i) {
      Placement target = dst.placement(i);
      if (target.is_shard()) {
        bool aligned = true;
        for (int j = 0; j < i; ++j) {
          const bool cur = current.placement(j) == target;
          const bool want = dst.placement(j) == target;
          aligned = aligned && cur == want;
        }
        if (!aligned) target = Placement::Replicate();
      }
      if (current.placement(i) != target) {
        absl::Status s = Emit(mesh, current, i, target, steps);
        if (!s.ok()) return s;
      }
    }
  }
  for (int i = 0; i < ndim; ++i) {
    if (current.placement(i) != dst.placement(i)) {
      absl::Status s = Emit(mesh, current, i, dst.placement(i), steps);
      if (!s.ok()) return s;
    }
  }
  return steps;
}

}  // namespace reshard
