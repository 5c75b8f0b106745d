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

// Scans `steps` left to right without reordering. A missing_flattened_group
// warning names a group only when registering it would lower this plan's
// cost under `model`: its saving_us is what every run that would then merge
// onto the group saves together (a merge can cost more than the steps it
// replaces, e.g. on a slower inter-host link, and registering merges them
// all), and no such warning is given when the total is not a saving or when
// the run could not merge anyway (uneven extents).
MergeResult MergeFlattened(const Mesh& mesh, const CostModel& model,
                           std::vector<Step> steps);

}  // namespace reshard

#endif  // RESHARD_PLANNER_MERGE_PASS_H_
