// The pinned PyTorch's flattened-mesh merge pass (_optimize_transform_infos):
// runs of consecutive same-kind single-dim collectives become one step on a
// registered flattened group, with PyTorch's checks in PyTorch's order and
// warnings, plus the uneven guard PyTorch lacks where it gives wrong data
// (#194457). docs/DESIGN.md §3.1 states the rules; refusals other than "too
// few" warn.
#ifndef RESHARD_PLANNER_SEARCH_MERGE_PASS_H_
#define RESHARD_PLANNER_SEARCH_MERGE_PASS_H_

#include <vector>

#include "planner/core/plan.h"
#include "planner/cost/cost_model.h"

namespace reshard {

struct MergeResult {
  std::vector<Step> steps;  // unpriced
  std::vector<Warning> warnings;
};

// Where PyTorch reads the extent it checks a merged reduce_scatter
// against: its greedy planner from the source placements, its graph planner
// from the state before the run.
enum class ShapeSource { kGreedySource, kCurrentState };

// Scans `steps` (planned from `source`) left to right without reordering.
// A run that no registered group serves gets a missing_flattened_group
// warning, as in PyTorch; its saving_us is what every run that would then
// merge onto the group saves together under `model`, 0 when merging would
// not save (a merge can cost more than the steps it replaces, e.g. on a
// slower inter-host link).
MergeResult MergeFlattened(const Mesh& mesh, const CostModel& model,
                           const DistState& source, ShapeSource shapes,
                           std::vector<Step> steps);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_MERGE_PASS_H_
