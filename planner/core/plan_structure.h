// The structural check of a plan (docs/DESIGN.md §6.1): the first step starts
// at `src`, each step starts where the previous one ended and is exactly the
// step MakeStep infers for its (from, to, group), and the last ends in a
// state equivalent to `dst` (§2.3). Production code runs it on plans read
// from files or the wire before executing them; it moves no data (the
// reference library's CheckPlan adds the data run).
#ifndef RESHARD_PLANNER_CORE_PLAN_STRUCTURE_H_
#define RESHARD_PLANNER_CORE_PLAN_STRUCTURE_H_

#include "absl/status/status.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

// OK when `plan` is well formed on `mesh`; INVALID_ARGUMENT naming the first
// offending step ("steps[2]: starts from ... but the plan is at ...")
// otherwise.
absl::Status CheckPlanStructure(const Mesh& mesh, const Plan& plan);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_PLAN_STRUCTURE_H_
