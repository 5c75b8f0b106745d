#include "planner/core/plan.h"

#include <algorithm>
#include <array>

#include "planner/core/enum_names.h"

namespace reshard {
namespace {

// In the order of the enums' values.
constexpr std::array<absl::string_view, kPlannerKindCount> kPlannerNames = {
    "optimal", "torch_greedy", "torch_graph"};
constexpr std::array<absl::string_view, kWarningCodeCount> kWarningCodeNames = {
    "missing_flattened_group", "search_budget_exceeded",
    "non_ascending_merge_refused", "uneven_merge_refused"};
// A name per enumerator: a count raised without a name fails here.
static_assert(!kPlannerNames.back().empty() &&
              !kWarningCodeNames.back().empty());

}  // namespace

absl::string_view PlannerName(PlannerKind kind) {
  return EnumName(kind, kPlannerNames);
}

std::optional<PlannerKind> ParsePlanner(absl::string_view name) {
  return ParseEnumName<PlannerKind>(name, kPlannerNames);
}

absl::string_view WarningCodeName(WarningCode code) {
  return EnumName(code, kWarningCodeNames);
}

std::optional<WarningCode> ParseWarningCode(absl::string_view name) {
  return ParseEnumName<WarningCode>(name, kWarningCodeNames);
}

int Plan::CommunicatingSteps(const Mesh& mesh) const {
  return static_cast<int>(
      std::count_if(steps.begin(), steps.end(),
                    [&](const Step& s) { return s.IsCommunicating(mesh); }));
}

int Plan::CountOp(StepOp op) const {
  return static_cast<int>(std::count_if(
      steps.begin(), steps.end(), [&](const Step& s) { return s.op == op; }));
}

}  // namespace reshard
