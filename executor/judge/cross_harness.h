// The judge's harness for a cross-mesh plan (docs/DESIGN.md §9, §6.2): one
// global rank's run on generated data. A source rank's block is filled by
// the data rule on the source mesh under `src`; the CrossRunner runs
// `warmup` + `iters` timed times; a destination rank's result is judged on
// the destination mesh under `dst` (its Partial dims reduced by the
// validation collective, compared with g, checksummed). A rank that is
// only a source reports no tensor: it has no result to check.
#ifndef RESHARD_EXECUTOR_JUDGE_CROSS_HARNESS_H_
#define RESHARD_EXECUTOR_JUDGE_CROSS_HARNESS_H_

#include <cstdint>

#include "executor/judge/harness.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/cross_runner.h"
#include "executor/run/run.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "run_values/rank_report.h"

namespace reshard::executor {

// The rows of a cross-mesh run's report (RankReport's per-row seconds):
// the pre-steps, the transfers, the post-steps.
inline constexpr int kCrossRows = 3;

// Compiles `plan` for global `rank`, runs it warmup + iters times on
// generated data (`run.stopped` asked before each) and judges the result:
// one tensor in `tensors` on a destination rank, none on a source-only one;
// `peak_bytes` and `memory_bound_bytes` are the runner's staging and the
// rank's blocks.
RankReport RunCrossGenerated(const Mesh& src_mesh, const Mesh& dst_mesh,
                             const CrossMeshPlan& plan, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run,
                             const HarnessOptions& harness);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_JUDGE_CROSS_HARNESS_H_
