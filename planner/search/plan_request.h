// What a caller asks the planner: a tensor, its source and destination
// states, and the options that choose the planner, the cost model and the
// bounds. Apart from planner.h so that what reads or carries requests
// (the missing-group pricing, the cache, the wire) need not see MakePlan.
#ifndef RESHARD_PLANNER_SEARCH_PLAN_REQUEST_H_
#define RESHARD_PLANNER_SEARCH_PLAN_REQUEST_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/core/tensor_spec.h"
#include "planner/cost/cost_model.h"
#include "planner/search/flatten_policy.h"
#include "planner/search/search_support.h"

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
  // The optimal search's memory (planner/search/search_support.h).
  int64_t max_search_bytes = kDefaultMaxSearchBytes;
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
  // Whose plan cache entries the request may hit and makes
  // (planner/search/plan_cache.h); 0: the shared scope. Planning ignores it.
  uint64_t cache_scope = 0;
};

// Builds a request from the text forms users type. INVALID_ARGUMENT names
// the field (`tensor.shape[1]`, `tensor.dtype`, `src[0]`, ...).
absl::StatusOr<PlanRequest> ParsePlanRequest(
    const Mesh& mesh, std::vector<int64_t> shape, absl::string_view dtype,
    absl::string_view src, absl::string_view dst, PlanOptions options);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_PLAN_REQUEST_H_
