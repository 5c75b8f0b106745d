// Reads a plan JSON (docs/DESIGN.md §4, as `reshardctl plan --json` prints it)
// back into a Mesh and a Plan, liberally: fields that do not apply may be null
// or absent (other tools write null), costs are optional. Each step is rebuilt
// from its states and group (MakeStep), and any op, reduce_op or
// avg_divisor the file states must agree with what the states imply.
#ifndef RESHARD_PLANNER_FORMAT_PLAN_JSON_READER_H_
#define RESHARD_PLANNER_FORMAT_PLAN_JSON_READER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

struct PlanFile {
  Mesh mesh;
  Plan plan;
};

// INVALID_ARGUMENT naming the field ("plan.steps[1].op: ...") on malformed
// or inconsistent input.
absl::StatusOr<PlanFile> ReadPlanJson(absl::string_view text);

}  // namespace reshard

#endif  // RESHARD_PLANNER_FORMAT_PLAN_JSON_READER_H_
