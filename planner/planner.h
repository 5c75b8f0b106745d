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
  // Expanded states: bounds the optimal and torch_graph searches.
  int64_t search_budget = kDefaultSearchBudget;
  // Per rank and step, for every planner.
  std::optional<int64_t> max_peak_bytes;
};

// The most a tensor's bytes times the mesh's world size may be. A step's
// padded per-rank buffer never exceeds that product (a padded block is at
// most the tensor, a group at most the world), so below it every byte
// count, peak (input + output) and plan total over up to 64 steps fits in
// int64: no count overflows into a negative size or time.
inline constexpr int64_t kMaxTensorBytesTimesRanks = int64_t{1} << 56;

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
// the mesh or the planner (tensor.shape when its bytes times the world size
// exceed kMaxTensorBytesTimesRanks); FAILED_PRECONDITION where a torch planner
// cannot plan what PyTorch cannot, or where the plan would need more than
// `max_peak_bytes` in a step (every planner: the optimal search plans
// within the cap; a torch plan or a fallback above it is refused, naming
// its peak and the cap).
//
// The search budget bounds both searches, differently on purpose. When the
// optimal search exceeds it, the optimal planner (the default, which must
// answer) falls back to torch_greedy+merge, or where PyTorch's greedy
// planner cannot plan the request to gathering everything to R and
// splitting again, with a `search_budget_exceeded` warning that sets the
// fallback's cost against the search's lower bound. torch_graph, a
// reproduction of PyTorch's plan, has no fallback that would still be
// PyTorch's plan: past the budget it is RESOURCE_EXHAUSTED naming
// options.search_budget.
//
// `stop` is polled during searches; its non-OK status is returned as is.
// Every cost in the plan is finite (mesh.h's link ranges); no valid
// request is answered INTERNAL.
absl::StatusOr<Plan> MakePlan(const Mesh& mesh, const PlanRequest& request,
                              const StopCheck& stop = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_PLANNER_H_
