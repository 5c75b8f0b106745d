#include "planner/core/plan_structure.h"

#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

absl::Status Malformed(size_t index, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("steps[", index, "]: ", what));
}

}  // namespace

absl::Status CheckPlanStructure(const Mesh& mesh, const Plan& plan) {
  DistState state = plan.src;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i];
    if (step.from != state) {
      return Malformed(
          i, absl::StrCat("step ", i, " starts from ", step.from.ToString(),
                          " but the plan is at ", state.ToString()));
    }
    absl::StatusOr<Step> expected =
        MakeStep(mesh, step.from, step.to, step.group);
    if (!expected.ok()) return Malformed(i, expected.status().message());
    if (!expected->SameAction(step)) {
      return Malformed(i, absl::StrCat("step ", i, " (", StepOpName(step.op),
                                       ") disagrees with its inferred form (",
                                       StepOpName(expected->op), ")"));
    }
    state = step.to;
  }
  if (state.Canonical(mesh) != plan.dst.Canonical(mesh)) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps: the plan ends at ", state.ToString(),
                     ", not equivalent to ", plan.dst.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace reshard
