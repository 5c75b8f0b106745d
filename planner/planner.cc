#include "planner/planner.h"

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/merge_pass.h"
#include "planner/plan_costs.h"
#include "planner/state_text.h"
#include "planner/torch_graph.h"
#include "planner/torch_greedy.h"

namespace reshard {

absl::string_view PlannerName(PlannerKind kind) {
  return kind == PlannerKind::kTorchGraph ? "torch_graph" : "torch_greedy";
}

std::optional<PlannerKind> ParsePlanner(absl::string_view name) {
  if (name == "torch_greedy") return PlannerKind::kTorchGreedy;
  if (name == "torch_graph") return PlannerKind::kTorchGraph;
  return std::nullopt;
}

absl::StatusOr<PlanRequest> ParsePlanRequest(const Mesh& mesh,
                                             std::vector<int64_t> shape,
                                             absl::string_view dtype,
                                             absl::string_view src,
                                             absl::string_view dst,
                                             PlanOptions options) {
  std::optional<DType> parsed_dtype = ParseDType(dtype);
  if (!parsed_dtype.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor.dtype: unknown dtype \"", dtype,
        "\"; expected float32, float64, bfloat16, float16, int32 or int64"));
  }
  absl::StatusOr<TensorSpec> tensor =
      TensorSpec::Create(std::move(shape), *parsed_dtype);
  if (!tensor.ok()) return tensor.status();
  absl::StatusOr<DistState> src_state =
      ParseDistState(src, mesh.ndim(), tensor->rank(), "src");
  if (!src_state.ok()) return src_state.status();
  absl::StatusOr<DistState> dst_state =
      ParseDistState(dst, mesh.ndim(), tensor->rank(), "dst");
  if (!dst_state.ok()) return dst_state.status();
  return PlanRequest{*std::move(tensor), *src_state, *dst_state, options};
}

absl::StatusOr<Plan> MakePlan(const Mesh& mesh, const PlanRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  const PlanOptions& options = request.options;
  if (request.src.mesh_ndim() != mesh.ndim() ||
      request.dst.mesh_ndim() != mesh.ndim()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "src/dst: placements cover ", request.src.mesh_ndim(), "/",
        request.dst.mesh_ndim(), " mesh dims, the mesh has ", mesh.ndim()));
  }
  if (options.devices_per_host < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.devices_per_host: must be >= 1, got ",
                     options.devices_per_host));
  }
  Plan plan;
  plan.tensor = request.tensor;
  plan.src = request.src;
  plan.dst = request.dst;
  plan.planner = std::string(PlannerName(options.planner));
  plan.cost_model = std::string(CostModelName(options.cost_model));
  const CostModel model(mesh, plan.tensor,
                        {options.cost_model, options.devices_per_host});
  if (options.planner == PlannerKind::kTorchGreedy) {
    absl::StatusOr<std::vector<Step>> steps =
        TorchGreedySteps(mesh, request.src, request.dst);
    if (!steps.ok()) return steps.status();
    plan.steps = *std::move(steps);
  } else {
    // PyTorch's Dijkstra always searches with its own cost model.
    const CostModel torch_model(mesh, plan.tensor,
                                {CostModelKind::kTorch, options.devices_per_host});
    absl::StatusOr<GraphResult> result =
        TorchGraphSteps(mesh, torch_model, request.src, request.dst);
    if (!result.ok()) return result.status();
    plan.steps = std::move(result->steps);
    plan.states_expanded = result->states_expanded;
  }
  if (options.merge) {
    MergeResult merged = MergeFlattened(mesh, model, std::move(plan.steps));
    plan.steps = std::move(merged.steps);
    plan.warnings = std::move(merged.warnings);
  }
  PricePlan(model, plan);
  plan.planning_us = std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return plan;
}

}  // namespace reshard
