// The most bytes one rank's runner holds at once for a plan or a batch: the
// plan's and the batch's `peak_bytes` (docs/DESIGN.md §3.3). It is the maximum,
// over the ranks and over what runs (each step on a group of more than one
// rank, each bucket of several steps, a tensor's copy through when no step
// moves it), of step_memory.h's live bytes: what the executor measures.
// Exact: an evenly split step (every rank holds the same extents) is
// priced once from its extents; an uneven one over every rank with a
// distinct layout (ranks that differ only on mesh dims a step neither
// shards nor communicates over share it) while that costs at most
// kExactPeakWork boxes; beyond it, an upper bound: the largest rank's
// tensors and every wire buffer the collective could need.
#ifndef RESHARD_PLANNER_COST_PLAN_MEMORY_H_
#define RESHARD_PLANNER_COST_PLAN_MEMORY_H_

#include <cstdint>

#include "absl/types/span.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

inline constexpr int64_t kExactPeakWork = int64_t{1} << 16;

// A plan's peak and the step that reaches it (-1 when no step moves data:
// the runner copies the source through).
struct PeakAt {
  int64_t bytes = 0;
  int step = -1;
};
PeakAt PlanPeak(const Mesh& mesh, const Plan& plan);

// The peak of `plans` run as `schedule` (a BatchRunner's measured peak).
int64_t BatchPeakBytes(const Mesh& mesh, absl::Span<const Plan* const> plans,
                       const BucketSchedule& schedule);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_PLAN_MEMORY_H_
