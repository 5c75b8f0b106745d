// The run is the product (docs/DESIGN.md §6.1): one rank's compiled program
// (a BatchRunner: a plan is a batch of one) run on this rank's own buffers
// (a job's registered tensors, a framework's, device memory), with the
// production controls and nothing else. What the buffers hold and whether
// the result is right is the caller's business: the judge
// (executor/judge/harness.h) wraps runs to generate and check data; the
// runner never knows of it.
#ifndef RESHARD_EXECUTOR_RUN_RUN_H_
#define RESHARD_EXECUTOR_RUN_RUN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/memory/memory_space.h"
#include "executor/run/batch_runner.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/preflight.h"
#include "planner/core/mesh.h"
#include "run_values/batch_work.h"

namespace reshard::executor {

// This rank's buffers, per tensor of the work: its source (its block under
// the plan's src) and where its result goes (its block under dst), in the
// run's memory space.
struct RunBuffers {
  std::vector<const void*> sources;
  std::vector<void*> results;
};

// A run's production controls.
struct RunOptions {
  // Where the buffers live: null for host memory (Gloo), else the space's
  // (a device's memory for NCCL; executor/memory/memory_space.h).
  MemorySpace* space = nullptr;
  // Asked before each execution: true stops the run with CANCELLED (an
  // agent whose run was cancelled, or whose Coordinator went away). Null:
  // never stops.
  std::function<bool()> stopped;
  // Told after each execution how many the program has finished: an
  // agent's progress. Null: not told.
  std::function<void(int)> progress;
};

// Compiles `work` for global `rank` after the pre-flight step (`preflight`
// carries this rank's binding in and the step's outcome out; null: nothing
// to bind). BatchRunner::Compile's errors.
absl::StatusOr<std::unique_ptr<BatchRunner>> CompileRun(
    const Mesh& mesh, const BatchWork& work, int64_t rank,
    CommunicatorProvider& provider, const RunOptions& options,
    Preflight* preflight = nullptr);

// Runs `program` once on `buffers`: CANCELLED ("stopped after K
// executions") without moving anything when `options.stopped` says so,
// else BatchRunner::Run's outcome, `options.progress` told on success.
absl::Status Run(BatchRunner& program, const RunBuffers& buffers,
                 const RunOptions& options, BatchRunStats* stats = nullptr);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_RUN_H_
