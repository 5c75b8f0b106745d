// CheckPlan: the reference judge of a whole plan. Part of the reference
// library (`reshard_reference`), which tests and tools link and no
// production target does.
#ifndef RESHARD_REFERENCE_PLAN_CHECK_H_
#define RESHARD_REFERENCE_PLAN_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

// Checks that the plan is well formed (CheckPlanStructure) and that running
// it in the reference simulator on random source data consistent with `src`
// (int64 and double, partial contributions included) leaves every rank with
// exactly the data `dst` prescribes; for Partial destinations the reduction
// over each partial group must equal the global value. INTERNAL ("plan check
// failed: ...") describing the first problem otherwise.
absl::Status CheckPlan(const Mesh& mesh, const Plan& plan, uint64_t seed = 1);

}  // namespace reshard

#endif  // RESHARD_REFERENCE_PLAN_CHECK_H_
