// PyTorch's recorded answers (tests/python/torch_planner_record.py: its
// planners' transform infos, its merge pass's output and warnings, on CPU, a
// fake process group, rank 0) compared with Reshard's torch modes step for
// step and warning code for warning code. Shared by torch_2_11_test (the
// committed 2.11 record) and torch_differential (a fresh record of the
// installed PyTorch).
#ifndef RESHARD_TESTS_PLANNER_TORCH_RECORD_H_
#define RESHARD_TESTS_PLANNER_TORCH_RECORD_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/plan.h"
#include "planner/search/plan_request.h"
#include "tests/json_lite.h"

namespace reshard::testing {

// Why Reshard's answer differs from PyTorch's for a case, by
// docs/PLAN_JSON.md's list of deviations.
enum class Deviation {
  kNone,
  // PyTorch's greedy plan holds Shard -> Partial(op != sum) or Partial ->
  // another Partial: its executor refuses to run it, so torch_greedy
  // refuses.
  kUnrunnable,
  // PyTorch merges an all_gather over >= 2 dims of size > 1 on extents that
  // do not split evenly and gives wrong data: Reshard refuses that merge.
  kUnevenMergedGather,
  // PyTorch's plan passes through a state mixing P(max) or P(min) with
  // another Partial op, whose value depends on the order its reductions
  // run in: Reshard holds no such state. torch_greedy refuses;
  // torch_graph skips the edge into it and returns its best other path.
  kMixedPartials,
  // PyTorch merges a reduction whose first step is P(avg) on a size-1 dim
  // with P(sum) steps, keeps Partial(avg) without a scale and averages over
  // the whole flattened group: wrong data. Reshard's merged step sums.
  kAvgOverMergedGroup,
  // Any other difference: a defect of the modes (or of the record).
  kUnexplained,
};

std::string DeviationName(Deviation d);

// Steps as text ("T1 Shard(dim=0)->Replicate()", "F0,1 Partial(sum)->
// Replicate() x4") and warnings as codes ("missing_flattened_group:0,1").
struct Answer {
  std::vector<std::string> steps;
  std::set<std::string> warnings;
  std::string error;  // a refusal instead of a plan

  bool operator==(const Answer&) const = default;
};

struct Comparison {
  Deviation deviation = Deviation::kNone;
  Answer want;  // PyTorch's
  Answer got;   // Reshard's
  // Context for a kUnexplained case.
  std::string detail;
};

// Record `r`'s mesh (with the groups PyTorch could flatten) and request.
struct RecordedRequest {
  Mesh mesh;
  PlanRequest request;
};
absl::StatusOr<RecordedRequest> RequestOf(const Json& r,
                                          const PlanOptions& options);

// Plans record `r`'s request with `planner` (torch_greedy or torch_graph),
// with or without the merge pass, and compares with the record's answer.
Comparison CompareMode(const Json& r, PlannerKind planner, bool merge);

// "torch_greedy", "torch_graph+merge", ...
std::string ModeName(PlannerKind planner, bool merge);

// The record's answer in that mode, as steps and warning codes.
Answer RecordedAnswer(const Json& r, PlannerKind planner, bool merge);

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_PLANNER_TORCH_RECORD_H_
