// One rank's whole run, as reshardctl exec and the agents do it (docs/DESIGN.md
// §6.2, §6.3, §8): every tensor's source data by the data rule, the work
// compiled (BatchRunner: a plan is a batch of one), `warmup` + `iters`
// timed runs, then per tensor the validation collective (the Partial dims
// of its `dst` reduced, not timed), the comparison with g and the
// checksum. Validation never calls a planner or the simulator.
#ifndef RESHARD_EXECUTOR_RUNTIME_RANK_RUN_H_
#define RESHARD_EXECUTOR_RUNTIME_RANK_RUN_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/runtime/communicator_provider.h"
#include "executor/runtime/memory_space.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "run_values/batch_work.h"
#include "run_values/rank_report.h"

namespace reshard::executor {

// A run on the caller's own tensors (an agent's registered memory; host
// memory only): per item, this rank's source (its block under plan.src)
// and where the result goes (its block under plan.dst).
struct CallerTensors {
  std::vector<const void*> sources;
  std::vector<void*> results;
};

struct RankOptions {
  int iters = 1;
  int warmup = 0;
  bool keep_result = false;  // return the result tensors (tests)
  // Where the run's data lives: null for host memory (the Gloo backend),
  // else the space's (device memory for NCCL; executor/runtime/memory_space.h).
  // Source data is uploaded and results downloaded for validation, both
  // untimed.
  MemorySpace* space = nullptr;
  // Asked before each execution: true stops the run with CANCELLED (an
  // agent whose run was cancelled, or whose Coordinator went away). Null:
  // never stops.
  std::function<bool()> stopped;
  // Told after each execution how many have finished (warmup included):
  // an agent's progress. Null: not told.
  std::function<void(int)> progress;
  // Set: the run reads and writes these instead of generated data, and
  // each tensor is judged by the conservation checksum
  // (executor/runtime/conservation_check.h) instead of the data rule.
  const CallerTensors* tensors = nullptr;
};

// TotalExecutions(warmup, iters) is in batch_work.h.
inline int TotalExecutions(const RankOptions& options) {
  return TotalExecutions(options.warmup, options.iters);
}

// CANCELLED ("stopped after `done` of `total` executions") once `stopped`
// (when set) says so; asked before each execution of a run.
absl::Status CheckStopped(const std::function<bool()>& stopped, int done,
                          int total);

RankReport RunRank(const Mesh& mesh, const BatchWork& work, int64_t rank,
                   CommunicatorProvider& provider, const RankOptions& options);

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

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUNTIME_RANK_RUN_H_
