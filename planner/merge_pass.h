// PyTorch's flattened-mesh merge post-pass (PR #172610), plus the uneven
// all_gather guard PyTorch lacks (#194457): runs of consecutive same-kind
// single-dim collectives become one step on a registered flattened group.
// DESIGN §3.1 states the rules; refusals other than "too few" warn.
#ifndef RESHARD_PLANNER_MERGE_PASS_H_
#define RESHARD_PLANNER_MERGE_PASS_H_

#include <vector>

#include "planner/cost_model.h"
#include "planner/plan.h"

namespace reshard {

struct MergeResult {
  std::vector<Step> steps;  // unpriced
  std::vector<Warning> warnings;
};

// Scans `steps` left to right without reordering. `model` estimates the
// saving a refused merge would have brought (Warning::saving_us).
MergeResult MergeFlattened(const Mesh& mesh, const CostModel& model,
                           std::vector<Step> steps);

// Appends `w` unless a warning with the same code and dims is present.
void AddWarning(std::vector<Warning>& warnings, Warning w);

// `("A", "C")` and the PyTorch remedy `mesh["A", "C"]._flatten()`.
std::string QuotedDims(const std::vector<std::string>& names);
std::string FlattenRemedy(const std::vector<std::string>& names);

}  // namespace reshard

#endif  // RESHARD_PLANNER_MERGE_PASS_H_
