// A Plan is a rank-independent sequence of Steps that turns a tensor's source
// state into its destination state on a mesh, with its costs and warnings.
// It is a plain value: planners produce it, the simulator checks it, the
// formatters print it (plan_format.h), executors run it.
#ifndef RESHARD_PLANNER_CORE_PLAN_H_
#define RESHARD_PLANNER_CORE_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"
#include "planner/core/tensor_spec.h"
#include "planner/cost/cost_model.h"

namespace reshard {

// The planners (planner.h): "optimal", "torch_greedy", "torch_graph".
enum class PlannerKind { kOptimal, kTorchGreedy, kTorchGraph };
// How many PlannerKinds there are (values 0..count-1): name tables and
// per-planner metrics series are sized by it.
inline constexpr int kPlannerKindCount = 3;

absl::string_view PlannerName(PlannerKind kind);
std::optional<PlannerKind> ParsePlanner(absl::string_view name);

// The PyTorch release whose planners torch_greedy and torch_graph
// reproduce (with its merge pass): the project environment's pin
// (requirements.txt), held to it live by the differential test
// (docs/PLAN_JSON.md, "Following the pin"). Plan JSON names it for their
// plans.
inline constexpr absl::string_view kTorchVersion = "2.15.0";

// The closed set of warning codes (docs/DESIGN.md §3.4). WarningCodeName gives
// the one text form, used by JSON, the wire and metrics labels.
enum class WarningCode {
  kMissingFlattenedGroup,     // "missing_flattened_group"
  kSearchBudgetExceeded,      // "search_budget_exceeded"
  kNonAscendingMergeRefused,  // "non_ascending_merge_refused"
  kUnevenMergeRefused,        // "uneven_merge_refused"
};
inline constexpr int kWarningCodeCount = 4;  // values 0..count-1

absl::string_view WarningCodeName(WarningCode code);
std::optional<WarningCode> ParseWarningCode(absl::string_view name);

// A structured warning (docs/DESIGN.md §3.4).
struct Warning {
  WarningCode code = WarningCode::kMissingFlattenedGroup;
  std::vector<std::string> dims;  // mesh dim names concerned.
  std::string message;
  double saving_us = 0;  // estimated time the remedy would save.
  bool operator==(const Warning&) const = default;
};

struct Plan {
  TensorSpec tensor;
  DistState src;
  DistState dst;
  PlannerKind planner = PlannerKind::kOptimal;  // the planner that made it
  CostModelKind cost_model = CostModelKind::kAlphaBeta;  // that priced it
  std::vector<Step> steps;
  std::vector<Warning> warnings;
  double total_time_us = 0;
  int64_t total_bytes = 0;
  int64_t peak_bytes = 0;
  double planning_us = 0;
  int64_t states_expanded = 0;
  // The most bytes the optimal search's tables allocated (0: no search).
  int64_t search_bytes = 0;
  bool cache_hit = false;

  // Steps that move data between ranks (collectives on groups of size > 1).
  int CommunicatingSteps(const Mesh& mesh) const;
  // Number of steps with `op` (any group size).
  int CountOp(StepOp op) const;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_PLAN_H_
