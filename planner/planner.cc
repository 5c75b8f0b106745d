#include "planner/planner.h"

#include <algorithm>
#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/merge_pass.h"
#include "planner/plan_costs.h"
#include "planner/replicate_fallback.h"
#include "planner/state_text.h"
#include "planner/torch_graph.h"
#include "planner/torch_greedy.h"

namespace reshard {

absl::StatusOr<PlanRequest> ParsePlanRequest(
    const Mesh& mesh, std::vector<int64_t> shape, absl::string_view dtype,
    absl::string_view src, absl::string_view dst, PlanOptions options) {
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

namespace {

int NonUnitDims(const Mesh& mesh) {
  return static_cast<int>(std::count_if(mesh.shape().begin(),
                                        mesh.shape().end(),
                                        [](int64_t s) { return s > 1; }));
}

bool UsesOnlyRegisteredGroups(const Mesh& mesh,
                              const std::vector<Step>& steps) {
  return std::all_of(steps.begin(), steps.end(), [&](const Step& s) {
    return s.group.size() < 2 || mesh.IsRegistered(s.group);
  });
}

// One missing_flattened_group warning per unregistered group that the
// cheaper `any` plan uses.
void AddMissingGroupWarnings(const Mesh& mesh, double cost,
                             const SearchResult& better, Plan& plan) {
  const double saving = cost - better.cost;
  for (const Step& step : better.steps) {
    if (step.group.size() < 2 || mesh.IsRegistered(step.group)) continue;
    std::vector<std::string> names;
    for (int d : step.group) names.push_back(mesh.dim_names()[d]);
    const bool ascending = std::is_sorted(step.group.begin(), step.group.end());
    AddWarning(
        plan.warnings,
        {WarningCode::kMissingFlattenedGroup, names,
         absl::StrFormat(
             "one %s on mesh dims %s would lower the plan from %.4g us to "
             "%.4g us (saving %.4g us, %.1f%%); register the flattened group "
             "%s%s",
             StepOpName(step.op), QuotedDims(names), cost, better.cost, saving,
             100 * saving / cost, QuotedDims(names),
             ascending
                 ? absl::StrCat(" (PyTorch: ", FlattenRemedy(names), ")")
                 : std::string(" (PyTorch can flatten only ascending "
                               "dims; create it with Reshard's executor)")),
         saving});
  }
}

// Under `existing`, searches `any` first: when its best plan uses only
// registered groups it is the answer (set in `plan`, true returned);
// otherwise the unregistered groups it uses are worth a
// missing_flattened_group warning (kept in `any`). A search past its budget
// leaves both unset.
absl::StatusOr<bool> SearchAnyFirst(const Mesh& mesh, const CostModel& model,
                                    const PlanRequest& request,
                                    const SearchOptions& search, Plan& plan,
                                    std::optional<SearchResult>& any) {
  if (request.options.flatten_policy != FlattenPolicy::kExisting ||
      NonUnitDims(mesh) < 2) {
    return false;
  }
  SearchOptions any_options = search;
  any_options.flatten_policy = FlattenPolicy::kAny;
  absl::StatusOr<SearchResult> result =
      OptimalSearch(mesh, model, request.src, request.dst, any_options);
  if (!result.ok()) {
    if (result.status().code() == absl::StatusCode::kResourceExhausted) {
      return false;
    }
    return result.status();
  }
  plan.states_expanded = result->states_expanded;
  if (UsesOnlyRegisteredGroups(mesh, result->steps)) {
    plan.steps = std::move(result->steps);
    return true;
  }
  any = *std::move(result);
  return false;
}

// After the optimal search ran out of budget: torch_greedy+merge, or
// gathering to R and splitting again where PyTorch's greedy planner cannot
// plan the request, with a search_budget_exceeded warning.
absl::Status FallBack(const Mesh& mesh, const PlanRequest& request,
                      Plan& plan) {
  PlanRequest fallback = request;
  fallback.options.planner = PlannerKind::kTorchGreedy;
  fallback.options.merge = true;
  absl::StatusOr<Plan> greedy = MakePlan(mesh, fallback);
  std::string used = "torch_greedy+merge";
  if (greedy.ok()) {
    plan.steps = std::move(greedy->steps);
    plan.warnings = std::move(greedy->warnings);
  } else {
    // PyTorch's greedy planner cannot plan everything (S -> P(avg),
    // non-default orders); gathering to R always works.
    absl::StatusOr<std::vector<Step>> via_r =
        ViaReplicateSteps(mesh, request.src, request.dst);
    if (!via_r.ok()) return via_r.status();
    plan.steps = *std::move(via_r);
    used = absl::StrCat("gathering to R and splitting again (torch_greedy: ",
                        greedy.status().message(), ")");
  }
  const int64_t budget = request.options.search_budget;
  plan.states_expanded += budget;
  AddWarning(plan.warnings,
             {WarningCode::kSearchBudgetExceeded,
              {},
              absl::StrCat("the optimal search expanded more than ", budget,
                           " states; fell back to ", used,
                           "; raise the search budget for a better plan"),
              0});
  return absl::OkStatus();
}

absl::Status PlanOptimal(const Mesh& mesh, const CostModel& model,
                         const PlanRequest& request, const StopCheck& stop,
                         Plan& plan) {
  const PlanOptions& options = request.options;
  SearchOptions search;
  search.flatten_policy = options.flatten_policy;
  search.budget = options.search_budget;
  search.max_peak_bytes = options.max_peak_bytes;
  search.stop = stop;
  std::optional<SearchResult> any;
  absl::StatusOr<bool> done =
      SearchAnyFirst(mesh, model, request, search, plan, any);
  if (!done.ok()) return done.status();
  if (*done) return absl::OkStatus();
  absl::StatusOr<SearchResult> result =
      OptimalSearch(mesh, model, request.src, request.dst, search);
  if (result.ok()) {
    plan.steps = std::move(result->steps);
    plan.states_expanded += result->states_expanded;
    if (any.has_value() && any->cost < result->cost * kCostBoundSlack) {
      AddMissingGroupWarnings(mesh, result->cost, *any, plan);
    }
    return absl::OkStatus();
  }
  if (result.status().code() != absl::StatusCode::kResourceExhausted) {
    return result.status();
  }
  return FallBack(mesh, request, plan);
}

}  // namespace

absl::StatusOr<Plan> MakePlan(const Mesh& mesh, const PlanRequest& request,
                              const StopCheck& stop) {
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
  if (options.search_budget < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.search_budget: must be >= 1, got ", options.search_budget));
  }
  if (options.max_peak_bytes.has_value() && *options.max_peak_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.max_peak_bytes: must be >= 1, got ", *options.max_peak_bytes));
  }
  Plan plan;
  plan.tensor = request.tensor;
  plan.src = request.src;
  plan.dst = request.dst;
  plan.planner = options.planner;
  plan.cost_model = options.cost_model;
  const CostModel model(mesh, plan.tensor,
                        {options.cost_model, options.devices_per_host});
  if (options.planner == PlannerKind::kOptimal) {
    absl::Status s = PlanOptimal(mesh, model, request, stop, plan);
    if (!s.ok()) return s;
  } else if (options.planner == PlannerKind::kTorchGreedy) {
    absl::StatusOr<std::vector<Step>> steps =
        TorchGreedySteps(mesh, request.src, request.dst);
    if (!steps.ok()) return steps.status();
    plan.steps = *std::move(steps);
  } else {
    // PyTorch's Dijkstra always searches with its own cost model.
    const CostModel torch_model(
        mesh, plan.tensor, {CostModelKind::kTorch, options.devices_per_host});
    absl::StatusOr<GraphResult> result = TorchGraphSteps(
        mesh, torch_model, request.src, request.dst, kMaxSearchBudget, stop);
    if (!result.ok()) return result.status();
    plan.steps = std::move(result->steps);
    plan.states_expanded = result->states_expanded;
  }
  if (options.merge && options.planner != PlannerKind::kOptimal) {
    MergeResult merged = MergeFlattened(mesh, model, std::move(plan.steps));
    plan.steps = std::move(merged.steps);
    for (Warning& w : merged.warnings) AddWarning(plan.warnings, std::move(w));
  }
  PricePlan(model, plan);
  plan.planning_us = std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return plan;
}

}  // namespace reshard
