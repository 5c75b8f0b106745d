// The judge's harness (docs/DESIGN.md §6.2, §6.3, §6.5, §8): one rank's
// judged run, as reshardctl exec, the agents, the benchmarks and the tests
// do it. A RunCheck supplies the buffers before the run and judges them
// after it; between the two the runner (executor/run/run.h) compiles the
// work (its pre-flight step included) and runs it `warmup` + `iters` timed
// times. Two checks: generated data by the data rule (§6.2: the validation
// collective, the comparison with g, the checksum), and a caller's own
// buffers by the conservation checksums (§6.5). Validation never calls a
// planner or the simulator.
#ifndef RESHARD_EXECUTOR_JUDGE_HARNESS_H_
#define RESHARD_EXECUTOR_JUDGE_HARNESS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/memory/memory_space.h"
#include "executor/run/batch_runner.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/preflight.h"
#include "executor/run/run.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "run_values/batch_work.h"
#include "run_values/rank_report.h"

namespace reshard::executor {

// How the harness times a run.
struct HarnessOptions {
  int iters = 1;
  int warmup = 0;
  bool keep_result = false;  // generated data: return the results (tests)
};

// TotalExecutions(warmup, iters) is in batch_work.h.
inline int TotalExecutions(const HarnessOptions& options) {
  return TotalExecutions(options.warmup, options.iters);
}

// What wraps a run: the buffers before it, the verdict after it.
class RunCheck {
 public:
  virtual ~RunCheck() = default;
  // This rank's buffers for `program`, in its memory space, before any
  // execution.
  virtual absl::StatusOr<RunBuffers> Before(const BatchRunner& program) = 0;
  // After the last execution: one TensorCheck per tensor into
  // `report.tensors`; the failure of a check's collective, if any.
  virtual absl::Status After(BatchRunner& program,
                             CommunicatorProvider& provider,
                             RankReport& report) = 0;
};

// Generated data: sources by the data rule, results judged against g with
// §6.2's checksum. With `space`, the data is uploaded and the results
// downloaded, both untimed.
std::unique_ptr<RunCheck> GeneratedData(MemorySpace* space, bool keep_result);

// The caller's own host buffers, judged by the conservation checksums
// (executor/judge/conservation_check.h): the sources' shares are taken
// before the first execution.
std::unique_ptr<RunCheck> ConservedData(RunBuffers buffers);

// Compiles `work` for `rank` (`preflight`: the runner's pre-flight step),
// runs it warmup + iters times, timing the rows, then `check` judges it.
RankReport RunJudged(const Mesh& mesh, const BatchWork& work, int64_t rank,
                     CommunicatorProvider& provider, RunCheck& check,
                     const RunOptions& run, const HarnessOptions& harness,
                     Preflight* preflight = nullptr);

// RunJudged on generated data in `run.space`.
RankReport RunGenerated(const Mesh& mesh, const BatchWork& work, int64_t rank,
                        CommunicatorProvider& provider, const RunOptions& run,
                        const HarnessOptions& harness);

// The timed executions' seconds into `report`: per row its min, median
// and first kReportedExecutions samples, and the whole run's min and
// median (`total`, one per execution).
void SummarizeTimings(const std::vector<std::vector<double>>& rows,
                      const std::vector<double>& total, RankReport& report);

// What a rank's result of one tensor amounts to (docs/DESIGN.md §6.2): the
// validation collective (the Partial dims of `plan.dst` reduced in place on
// `result`, not timed), the comparison with g and the checksum. `status` is
// the collective's failure, if any.
struct ResultCheck {
  absl::Status status;
  TensorCheck check;
};
ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result);
// The same with the number of ranks the source's Partial dims spread a
// value over given (a cross-mesh plan's source is on another mesh).
ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result,
                        int64_t source_partial_ranks);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_JUDGE_HARNESS_H_
