// The planning entry point: one request (tensor, source and destination
// states, options) on one mesh in, one priced Plan out. Every planner is
// reached through MakePlan so that options, pricing and warnings mean the
// same thing everywhere. Pure and thread-safe.
#ifndef RESHARD_PLANNER_PLANNER_H_
#define RESHARD_PLANNER_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/cost_model.h"
#include "planner/dist_state.h"
#include "planner/mesh.h"
#include "planner/optimal_search.h"
#include "planner/plan.h"
#include "planner/tensor_spec.h"

namespace reshard {

struct PlanOptions {
  PlannerKind planner = PlannerKind::kOptimal;
  CostModelKind cost_model = CostModelKind::kAlphaBeta;
  bool merge = false;  // PyTorch's merge post-pass (torch planners only)
  int64_t devices_per_host = 8;
  FlattenPolicy flatten_policy = FlattenPolicy::kExisting;  // optimal only
  int64_t search_budget = kDefaultSearchBudget;  // expanded states (optimal)
  std::optional<int64_t> max_peak_bytes;         // per rank and step (optimal)
};

struct PlanRequest {
  TensorSpec tensor;
  DistState src;
  DistState dst;
  PlanOptions options;
};

// Builds a request from the text forms users type. INVALID_ARGUMENT names
// the field (`tensor.shape[1]`, `tensor.dtype`, `src[0]`, ...).
absl::StatusOr<PlanRequest> ParsePlanRequest(
    const Mesh& mesh, std::vector<int64_t> shape, absl::string_view dtype,
    absl::string_view src, absl::string_view dst, PlanOptions options);

// Plans `request` on `mesh`. INVALID_ARGUMENT for requests that do not fit
// the mesh or the planner; FAILED_PRECONDITION where a torch planner cannot
// plan what PyTorch cannot, or no plan fits `max_peak_bytes`. When the
// optimal search exceeds its budget it falls back to torch_greedy+merge,
// or where PyTorch's greedy planner cannot plan the request to gathering
// everything to R and splitting again, with a `search_budget_exceeded`
// warning.
// `stop` is polled during searches; its non-OK status is returned as is.
absl::StatusOr<Plan> MakePlan(const Mesh& mesh, const PlanRequest& request,
                              const StopCheck& stop = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_PLANNER_H_
