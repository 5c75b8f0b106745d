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
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "executor/judge/harness.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/cross_runner.h"
#include "executor/run/preflight.h"
#include "executor/run/run.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "run_values/cross_work.h"
#include "run_values/rank_report.h"

namespace reshard::executor {

// Compiles `plan` for global `rank`, runs it warmup + iters times on
// generated data (`run.stopped` asked before each) and judges the result:
// one tensor in `tensors` on a destination rank, none on a source-only one;
// `peak_bytes` and `memory_bound_bytes` are the runner's staging and the
// rank's blocks. With `kept` (a prepared schedule's), the runner it holds
// is run instead of compiling one, and a runner compiled is left there:
// the caller keeps it only while the provider's communicators stay open.
RankReport RunCrossGenerated(const CrossWork& work, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run,
                             const HarnessOptions& harness,
                             std::unique_ptr<CrossRunner>* kept = nullptr);

// A batch's RunCrossGenerated (CrossRunner::CompileBatch's errors): a
// destination rank reports one tensor per item, in order, each judged on
// the destination mesh alike. RunCrossGenerated is a batch of one with no
// exchange bound.
RankReport RunCrossBatchGenerated(absl::Span<const CrossWork> items,
                                  int64_t exchange_bytes, int64_t rank,
                                  CommunicatorProvider& provider,
                                  const RunOptions& run,
                                  const HarnessOptions& harness,
                                  std::unique_ptr<CrossRunner>* kept = nullptr);

// One execution of `what` for global `rank` on the caller's own buffers
// (docs/DESIGN.md §6.6): `tensors.sources[t]` is this rank's block of
// tensor t under its plan's src (null when not a source rank of it),
// `tensors.results[t]` receives its block under dst (null when not a
// destination rank). First the pre-flight step over every rank of the run
// (run/preflight.h: the digest and `preflight.binding`, so that a rank
// that could not bind its tensors, and holds no buffers, stops every rank
// before any data moves); then the run; then every tensor's conservation
// checksums of the sources and the results, added over every rank. A
// destination rank reports one tensor per item judged by them (§6.5); a
// source-only rank none. `kept` as RunCrossGenerated's: a repeated run
// compiles nothing.
RankReport RunCrossOnTensors(const CrossRunWork& what, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run, const RunBuffers& tensors,
                             Preflight& preflight,
                             std::unique_ptr<CrossRunner>* kept = nullptr);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_JUDGE_CROSS_HARNESS_H_
