// What the optimal and torch_graph searches share: their budgets, the stop
// check and how often they poll it, and reading the path they found back as
// steps.
#ifndef RESHARD_PLANNER_SEARCH_SEARCH_SUPPORT_H_
#define RESHARD_PLANNER_SEARCH_SEARCH_SUPPORT_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "planner/core/step.h"

namespace reshard {

// Search budgets, in expanded states, of the optimal and torch_graph
// searches: the default of a plan request, and the most a server lets a
// request ask for by default (its --max_search_budget).
inline constexpr int64_t kDefaultSearchBudget = 200000;
inline constexpr int64_t kMaxSearchBudget = 2000000;
// The most bytes the optimal search's tables may hold (a server's
// --max_search_bytes). Past it the search stops as it does past its
// budget; it stops once the tables' contents reach half of it, so that
// their allocations, which grow by doubling, stay within it.
inline constexpr int64_t kDefaultMaxSearchBytes = int64_t{1} << 30;

// Polled during long searches; a non-OK status stops the search with it
// (servers map deadlines and cancellations here).
using StopCheck = std::function<absl::Status()>;

// Searches poll their stop check once every this many expanded states.
inline constexpr int64_t kStopPollInterval = 64;

// `stop`'s status when `expanded` (the states expanded so far) is a multiple
// of kStopPollInterval; OK otherwise or when `stop` is empty.
inline absl::Status PollStop(const StopCheck& stop, int64_t expanded) {
  if (!stop || expanded % kStopPollInterval != 0) return absl::OkStatus();
  return stop();
}

// The steps of the path that ends at node `last`, first step first. Node 0
// is the source; `parent(n)` is the node that `n` was reached from and
// `step_into(n)` builds the step from there to `n` (absl::StatusOr<Step>;
// its first error is returned as is).
template <typename Parent, typename StepInto>
absl::StatusOr<std::vector<Step>> ReadBackPath(int64_t last, Parent parent,
                                               StepInto step_into) {
  std::vector<int64_t> chain;
  for (int64_t n = last; n > 0; n = parent(n)) chain.push_back(n);
  std::vector<Step> steps;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    absl::StatusOr<Step> step = step_into(*it);
    if (!step.ok()) return step.status();
    steps.push_back(*std::move(step));
  }
  return steps;
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_SEARCH_SUPPORT_H_
