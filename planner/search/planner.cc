#include "planner/search/planner.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "planner/core/state_text.h"
#include "planner/cost/plan_costs.h"
#include "planner/cost/plan_memory.h"
#include "planner/search/merge_pass.h"
#include "planner/search/missing_groups.h"
#include "planner/search/optimal_search.h"
#include "planner/search/plan_warnings.h"
#include "planner/search/replicate_fallback.h"
#include "planner/search/torch_graph.h"
#include "planner/search/torch_greedy.h"

namespace reshard {

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
  int64_t peak_bytes = 0;
  absl::StatusOr<SearchResult> result = OptimalSearch(
      mesh, model, request.src, request.dst, any_options, nullptr, &peak_bytes);
  plan.search_bytes = std::max(plan.search_bytes, peak_bytes);
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

// The search_budget_exceeded warning: which bound stopped the search
// (`bound`: its budget of expanded states, or its memory), the fallback
// (`used`, costing `cost`) against what the search proved
// (`lower_bound`), so that the caller can judge whether a larger budget
// is worth it.
Warning BudgetExceeded(const std::string& bound, const std::string& used,
                       double cost, double lower_bound) {
  const double headroom = std::max(0.0, cost - lower_bound);
  return {WarningCode::kSearchBudgetExceeded,
          {},
          absl::StrFormat(
              "the optimal search %s; fell back to %s, which costs %.4g us, "
              "while no plan costs less than %.4g us (the search's lower "
              "bound): a larger search budget can save at most %s",
              bound, used, cost, lower_bound, SavingText(headroom, cost)),
          headroom};
}

// After the optimal search ran out of budget (having proved that no plan
// costs less than `lower_bound`): torch_greedy+merge, or gathering to R
// and splitting again where PyTorch's greedy planner cannot plan the
// request, with a search_budget_exceeded warning. The peak cap is left to
// MakePlan's check of the result.
absl::Status FallBack(const Mesh& mesh, const CostModel& model,
                      const PlanRequest& request, double lower_bound,
                      bool memory_bound, Plan& plan) {
  PlanRequest fallback = request;
  fallback.options.planner = PlannerKind::kTorchGreedy;
  fallback.options.merge = true;
  fallback.options.max_peak_bytes.reset();
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
    used = absl::StrCat(
        "gathering to R and splitting again (torch_greedy: ",
        absl::StripPrefix(greedy.status().message(), "torch_greedy: "), ")");
  }
  const int64_t budget = request.options.search_budget;
  plan.states_expanded += budget;
  const std::string bound =
      memory_bound
          ? absl::StrFormat(
                "reached its memory bound of %d bytes (--max_search_bytes)",
                request.options.max_search_bytes)
          : absl::StrFormat("expanded more than %d states", budget);
  AddWarning(
      plan.warnings,
      BudgetExceeded(bound, used, TotalTime(model, plan.steps), lower_bound));
  return absl::OkStatus();
}

absl::Status PlanOptimal(const Mesh& mesh, const CostModel& model,
                         const PlanRequest& request, const StopCheck& stop,
                         Plan& plan) {
  const PlanOptions& options = request.options;
  SearchOptions search;
  search.flatten_policy = options.flatten_policy;
  search.budget = options.search_budget;
  search.max_bytes = options.max_search_bytes;
  search.max_peak_bytes = options.max_peak_bytes;
  search.stop = stop;
  std::optional<SearchResult> any;
  absl::StatusOr<bool> done =
      SearchAnyFirst(mesh, model, request, search, plan, any);
  if (!done.ok()) return done.status();
  if (*done) return absl::OkStatus();
  double lower_bound = 0;
  int64_t peak_bytes = 0;
  absl::StatusOr<SearchResult> result = OptimalSearch(
      mesh, model, request.src, request.dst, search, &lower_bound, &peak_bytes);
  plan.search_bytes = std::max(plan.search_bytes, peak_bytes);
  if (result.ok()) {
    plan.steps = std::move(result->steps);
    plan.states_expanded += result->states_expanded;
    if (any.has_value() && any->cost < result->cost * kCostBoundSlack) {
      AddMissingGroupWarnings(mesh, request, result->cost, *any, stop,
                              plan.warnings);
    }
    return absl::OkStatus();
  }
  if (result.status().code() != absl::StatusCode::kResourceExhausted) {
    return result.status();
  }
  const bool memory_bound =
      absl::StrContains(result.status().message(), "memory bound");
  return FallBack(mesh, model, request, lower_bound, memory_bound, plan);
}

// The steps of PyTorch's planners: torch_greedy, or torch_graph's Dijkstra
// (always with PyTorch's own cost model; the requested model only prices
// the result) within the request's search budget. Like PyTorch,
// torch_greedy hands non-default shard orders to the graph planner, and
// the plan names the planner that made it.
absl::Status PlanTorch(const Mesh& mesh, const PlanRequest& request,
                       const StopCheck& stop, Plan& plan) {
  if (plan.planner == PlannerKind::kTorchGreedy &&
      (!request.src.HasDefaultOrder() || !request.dst.HasDefaultOrder())) {
    plan.planner = PlannerKind::kTorchGraph;
  }
  if (plan.planner == PlannerKind::kTorchGreedy) {
    absl::StatusOr<std::vector<Step>> steps =
        TorchGreedySteps(mesh, request.src, request.dst);
    if (!steps.ok()) return steps.status();
    plan.steps = *std::move(steps);
    return absl::OkStatus();
  }
  const CostModel torch_model(
      mesh, plan.tensor,
      {CostModelKind::kTorch, request.options.devices_per_host});
  absl::StatusOr<GraphResult> result = TorchGraphSteps(
      mesh, torch_model, request.src, request.dst,
      request.options.search_budget, stop, request.options.max_search_bytes);
  if (!result.ok()) return result.status();
  plan.steps = std::move(result->steps);
  plan.states_expanded = result->states_expanded;
  return absl::OkStatus();
}

// FAILED_PRECONDITION naming the plan's peak and the cap when `plan` needs
// more than `cap` bytes on some rank (plan_memory.h). The optimal search
// bounds each step's tensors by the cap, but not the packing buffers a
// step adds to them; PyTorch's planners, and the optimal planner's
// fallback after its budget ran out, do not plan around the cap at all.
absl::Status CheckPeakCap(const Mesh& mesh, const Plan& plan, int64_t cap) {
  const PeakAt peak = PlanPeak(mesh, plan);
  const bool fallback = std::any_of(
      plan.warnings.begin(), plan.warnings.end(), [](const Warning& w) {
        return w.code == WarningCode::kSearchBudgetExceeded;
      });
  if (peak.bytes <= cap) return absl::OkStatus();
  std::string which;
  if (plan.planner != PlannerKind::kOptimal) {
    which = absl::StrCat("the ", PlannerName(plan.planner),
                         " plan (PyTorch's planners do not plan around a "
                         "memory cap; the optimal planner does)");
  } else if (fallback) {
    which =
        "the optimal planner's fallback plan (its search ran out of "
        "budget; raise options.search_budget)";
  } else {
    which =
        "the optimal plan (its search keeps every step's tensors within the "
        "cap; the step's packing buffers take it over)";
  }
  const std::string at =
      peak.step < 0 ? std::string("copying the source through")
                    : absl::StrCat("steps[", peak.step, "], ",
                                   StepOpName(plan.steps[peak.step].op), " on ",
                                   mesh.GroupName(plan.steps[peak.step].group));
  return absl::FailedPreconditionError(absl::StrCat(
      "options.max_peak_bytes: ", which, " peaks at ", peak.bytes,
      " bytes per rank (", at, "), above the cap of ", cap, " bytes"));
}

// INVALID_ARGUMENT naming the first option or field of `request` that does
// not fit `mesh`.
absl::Status CheckRequest(const Mesh& mesh, const PlanRequest& request) {
  const PlanOptions& options = request.options;
  if (request.src.mesh_ndim() != mesh.ndim() ||
      request.dst.mesh_ndim() != mesh.ndim()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "src/dst: placements cover ", request.src.mesh_ndim(), "/",
        request.dst.mesh_ndim(), " mesh dims, the mesh has ", mesh.ndim()));
  }
  const int64_t bytes = request.tensor.itemsize() * request.tensor.numel();
  if (bytes > kMaxTensorBytesTimesRanks / mesh.world_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor.shape: ", bytes, " bytes on a mesh of ", mesh.world_size(),
        " ranks: a step's padded buffers could reach bytes x ranks, above the ",
        kMaxTensorBytesTimesRanks, " the planner counts in"));
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
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Plan> MakePlan(const Mesh& mesh, const PlanRequest& request,
                              const StopCheck& stop) {
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status s = CheckRequest(mesh, request); !s.ok()) return s;
  const PlanOptions& options = request.options;
  Plan plan;
  plan.tensor = request.tensor;
  plan.src = request.src;
  plan.dst = request.dst;
  plan.planner = options.planner;
  plan.cost_model = options.cost_model;
  const CostModel model(mesh, plan.tensor,
                        {options.cost_model, options.devices_per_host});
  absl::Status s = options.planner == PlannerKind::kOptimal
                       ? PlanOptimal(mesh, model, request, stop, plan)
                       : PlanTorch(mesh, request, stop, plan);
  if (!s.ok()) return s;
  if (options.merge && options.planner != PlannerKind::kOptimal) {
    MergeResult merged = MergeFlattened(
        mesh, model, request.src,
        plan.planner == PlannerKind::kTorchGreedy ? ShapeSource::kGreedySource
                                                  : ShapeSource::kCurrentState,
        std::move(plan.steps));
    plan.steps = std::move(merged.steps);
    for (Warning& w : merged.warnings) AddWarning(plan.warnings, std::move(w));
  }
  PricePlan(model, plan);
  if (options.max_peak_bytes.has_value()) {
    s = CheckPeakCap(mesh, plan, *options.max_peak_bytes);
    if (!s.ok()) return s;
  }
  plan.planning_us = std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return plan;
}

}  // namespace reshard
