// Text renderings of a Plan: PyTorch's trace string, a human-readable step
// table, and the plan JSON (normative; one object; its fields and units are
// documented for users in docs/PLAN_JSON.md).
#ifndef RESHARD_PLANNER_FORMAT_PLAN_FORMAT_H_
#define RESHARD_PLANNER_FORMAT_PLAN_FORMAT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "common/json_text.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

// States joined by "->", or "-->" before a state reached by a multi-dim step:
// "P(sum)RP(sum)-->RRR".
std::string PlanTrace(const Plan& plan);

// One line per step: index, op, group, from -> to, bytes, µs, each column
// as wide as its widest cell; then totals and warnings.
std::string PlanTable(const Mesh& mesh, const Plan& plan);

// One "warning [CODE]: `label`MESSAGE" line per warning of `plan`.
std::string WarningLines(const Plan& plan, absl::string_view label = "");

// The plan JSON object, on one line. `reduce_op` is null on steps that do
// not reduce (UsesReduceOp false: all_gather, all_to_all, chunk).
std::string PlanJson(const Mesh& mesh, const Plan& plan);

// The parts PlanJson writes, for the documents that embed them (cross-mesh
// plans, layout digests): the mesh object (`rank_map` too when asked, the
// identity written out), one step object and one warning object.
std::string MeshJson(const Mesh& mesh, bool with_rank_map);
std::string StepJson(const Mesh& mesh, const Step& s);
std::string WarningJson(const Warning& w);

}  // namespace reshard

#endif  // RESHARD_PLANNER_FORMAT_PLAN_FORMAT_H_
