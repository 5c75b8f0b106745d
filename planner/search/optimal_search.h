// optimal: the least-cost plan over (placements, shard order) states where
// the edges are every single-dim step plus every multi-dim step (all_gather,
// all_to_all, all_reduce, reduce_scatter) on every usable group (docs/DESIGN.md
// §3.2). Merges therefore happen wherever they pay — between non-adjacent
// steps, for all_to_all, on uneven shapes — which PyTorch's post-pass cannot.
//
// The search is A* with an admissible bound (the cheapest time-ordered
// schedule of the collectives and local steps each mesh dim still needs,
// where dims that are P before their first collective or finished after
// their last split nothing and so make the other steps move more bytes),
// reopening states reached more cheaply later; ties broken by fewer
// communicating steps, then deeper nodes, then generation order, so the
// result is deterministic. It is bounded by a budget of expanded states.
#ifndef RESHARD_PLANNER_SEARCH_OPTIMAL_SEARCH_H_
#define RESHARD_PLANNER_SEARCH_OPTIMAL_SEARCH_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"
#include "planner/cost/cost_model.h"
#include "planner/search/flatten_policy.h"
#include "planner/search/search_support.h"

namespace reshard {

struct SearchOptions {
  FlattenPolicy flatten_policy = FlattenPolicy::kExisting;
  int64_t budget = kDefaultSearchBudget;       // expanded states
  int64_t max_bytes = kDefaultMaxSearchBytes;  // the tables' (search_support.h)
  std::optional<int64_t> max_peak_bytes;       // per rank, per step
  // Only paths cheaper than this are of interest (NOT_FOUND otherwise).
  std::optional<double> cost_bound;
  bool use_heuristic = true;  // false: plain Dijkstra (for tests)
  StopCheck stop;             // may be empty
};

struct SearchResult {
  std::vector<Step> steps;  // unpriced
  double cost = 0;          // under the search's model
  int64_t states_expanded = 0;
  int64_t peak_bytes = 0;  // what the tables allocated at most
};

// Finds the least-cost plan from `src` to a state equivalent to `dst`.
// RESOURCE_EXHAUSTED past the budget or the memory bound (the message says
// which), with `*lower_bound` (when given) set
// to what the search proved: no plan costs less (the smallest estimate
// still queued; the estimates are admissible, so the optimum lies at or
// above it). FAILED_PRECONDITION when no plan fits `max_peak_bytes`;
// NOT_FOUND when none is cheaper than `cost_bound`; whatever `stop` returns
// when it stops the search. Nothing else: every valid request has a plan
// (ViaReplicateSteps builds one) and every edge a finite cost (mesh.h's
// link ranges), so the search cannot run dry unpruned.
absl::StatusOr<SearchResult> OptimalSearch(
    const Mesh& mesh, const CostModel& model, const DistState& src,
    const DistState& dst, const SearchOptions& options,
    double* lower_bound = nullptr, int64_t* peak_bytes = nullptr);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_OPTIMAL_SEARCH_H_
