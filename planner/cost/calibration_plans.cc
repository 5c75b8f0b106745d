#include "planner/cost/calibration_plans.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "planner/core/local_layout.h"
#include "planner/core/tensor_spec.h"
#include "planner/cost/cost_model.h"
#include "planner/cost/packing_bytes.h"
#include "planner/cost/plan_costs.h"

namespace reshard {
namespace {

constexpr int64_t kF32Bytes = 4;
// Rows per group member: dim 0 splits evenly and every shard has rows.
constexpr int64_t kRowsPerMember = 16;

// A 2-D f32 tensor of about `numel` elements whose dim 0 splits evenly over
// `n` and whose dim 1 does too (all_to_all's target).
absl::StatusOr<TensorSpec> TensorOf(int64_t numel, int64_t n) {
  const int64_t rows = kRowsPerMember * n;
  const int64_t cols = std::max<int64_t>(1, numel / rows / n) * n;
  return TensorSpec::Create({rows, cols}, DType::kFloat32);
}

// The states before and after `op` on `group`.
std::pair<DistState, DistState> StatesOf(const Mesh& mesh, const Group& group,
                                         StepOp op) {
  DistState from = DistState::Replicated(mesh.ndim());
  DistState to = from;
  for (int m : group) {
    switch (op) {
      case StepOp::kAllGather:
        from.AppendShard(m, 0);
        break;
      case StepOp::kReduceScatter:
        from.SetPartial(m, ReduceOp::kSum);
        to.AppendShard(m, 0);
        break;
      case StepOp::kAllReduce:
        from.SetPartial(m, ReduceOp::kSum);
        break;
      default:  // all_to_all
        from.AppendShard(m, 0);
        to.AppendShard(m, 1);
        break;
    }
  }
  return {from, to};
}

}  // namespace

std::vector<Group> CalibrationGroups(const Mesh& mesh) {
  std::vector<Group> groups;
  for (int d = 0; d < mesh.ndim(); ++d) {
    if (mesh.size(d) > 1) groups.push_back({d});
  }
  for (const Group& g : mesh.flattened()) {
    const Group group = mesh.WithoutUnitDims(g);
    if (group.size() < 2) continue;
    if (std::find(groups.begin(), groups.end(), group) != groups.end()) {
      continue;
    }
    groups.push_back(group);
  }
  return groups;
}

absl::StatusOr<std::vector<int64_t>> CalibrationSizes(int64_t min_bytes,
                                                      int64_t max_bytes) {
  if (min_bytes < kF32Bytes || max_bytes < min_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("sizes: need 4 <= min_bytes <= max_bytes, got ", min_bytes,
                     " and ", max_bytes));
  }
  std::vector<int64_t> sizes;
  for (int64_t b = min_bytes; b <= max_bytes; b *= 4) {
    sizes.push_back(b);
    if (b > max_bytes / 4) break;
  }
  return sizes;
}

namespace {

// The one-step plan from `from` to `to` on `group` of `tensor`, priced
// under the default α-β model with the mesh's links.
absl::StatusOr<Plan> OneStepPlan(const Mesh& mesh, const Group& group,
                                 const TensorSpec& tensor,
                                 const DistState& from, const DistState& to) {
  absl::StatusOr<Step> step = MakeStep(mesh, from, to, group);
  if (!step.ok()) return step.status();
  Plan plan;
  plan.tensor = tensor;
  plan.src = from;
  plan.dst = to;
  plan.steps.push_back(*step);
  PricePlan(CostModel(mesh, tensor, CostOptions{}), plan);
  return plan;
}

}  // namespace

absl::StatusOr<Plan> CalibrationPlan(const Mesh& mesh, const Group& group,
                                     StepOp op, int64_t bytes) {
  if (!IsCollective(op)) {
    return absl::InvalidArgumentError("op: not a collective");
  }
  const int64_t n = mesh.GroupSize(group);
  // all_to_all's counted buffer is a shard (1/n of the tensor).
  const int64_t numel = bytes / kF32Bytes * (op == StepOp::kAllToAll ? n : 1);
  absl::StatusOr<TensorSpec> tensor = TensorOf(numel, n);
  if (!tensor.ok()) return tensor.status();
  auto [from, to] = StatesOf(mesh, group, op);
  return OneStepPlan(mesh, group, *tensor, from, to);
}

absl::StatusOr<Plan> StridedGatherPlan(const Mesh& mesh, const Group& group,
                                       int64_t bytes) {
  absl::StatusOr<TensorSpec> tensor =
      TensorOf(bytes / kF32Bytes, mesh.GroupSize(group));
  if (!tensor.ok()) return tensor.status();
  DistState from = DistState::Replicated(mesh.ndim());
  const DistState to = from;
  for (int m : group) from.AppendShard(m, 1);
  return OneStepPlan(mesh, group, *tensor, from, to);
}

int64_t PackedBytes(const Mesh& mesh, const Plan& plan) {
  const Step& step = plan.steps.at(0);
  const std::vector<int64_t> extents =
      MaxLocalExtents(mesh, step.from, plan.tensor.shape());
  return PackedElements(mesh, step.from, step.transition(), plan.tensor.shape(),
                        extents) *
         plan.tensor.itemsize();
}

}  // namespace reshard
