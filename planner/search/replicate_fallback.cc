#include "planner/search/replicate_fallback.h"

#include <utility>

namespace reshard {

absl::StatusOr<std::vector<Step>> ViaReplicateSteps(const Mesh& mesh,
                                                    const DistState& src,
                                                    const DistState& dst) {
  std::vector<Step> steps;
  DistState state = src;
  // Appends the step that turns `state` into `next` on mesh dim `m`.
  auto step_to = [&](const DistState& next, int m) -> absl::Status {
    absl::StatusOr<Step> step = MakeStep(mesh, state, next, {m});
    if (!step.ok()) return step.status();
    steps.push_back(*std::move(step));
    state = next;
    return absl::OkStatus();
  };
  // Down to R: reduce every Partial dim, then pop every shard order from
  // its innermost split.
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (!state.placement(m).is_partial()) continue;
    DistState next = state;
    next.SetReplicate(m);
    if (absl::Status s = step_to(next, m); !s.ok()) return s;
  }
  for (const ShardOrderEntry& entry : state.ShardOrderEntries()) {
    const std::vector<int>& order = entry.mesh_dims;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      DistState next = state;
      next.SetReplicate(*it);
      if (absl::Status s = step_to(next, *it); !s.ok()) return s;
    }
  }
  // Up to `dst`: split in each tensor dim's order, then partition.
  for (const ShardOrderEntry& entry : dst.ShardOrderEntries()) {
    for (int m : entry.mesh_dims) {
      DistState next = state;
      next.AppendShard(m, entry.tensor_dim);
      if (absl::Status s = step_to(next, m); !s.ok()) return s;
    }
  }
  for (int m = 0; m < mesh.ndim(); ++m) {
    const Placement& p = dst.placement(m);
    if (!p.is_partial()) continue;
    DistState next = state;
    next.SetPartial(m, p.op());
    if (absl::Status s = step_to(next, m); !s.ok()) return s;
  }
  return steps;
}

}  // namespace reshard
