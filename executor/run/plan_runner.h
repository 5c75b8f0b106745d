// A PlanRunner is one rank's compiled form of a plan (docs/DESIGN.md §6.1): the
// plan's structure checked once, its per-step layouts computed, its
// communicators obtained and the ranks' plan digests compared, so that Run
// does nothing but move data. Compile once, run many times on the caller's
// own buffers: no validation, no planning and no allocation after the first
// run on that path.
//
// A plan is a batch of one: this is a thin convenience over BatchRunner
// running the plan's UnbucketedSchedule, the executor's one run path.
//
// Memory: a step holds its input and output tensors plus its packed wire
// buffers where the blocks cannot be sent or received in place. The runner
// computes that bound from the layouts (never from a plan's `peak_bytes`)
// and measures what it holds (RunStats::peak_bytes).
//
// Not thread-safe: one Run at a time per runner.
#ifndef RESHARD_EXECUTOR_RUN_PLAN_RUNNER_H_
#define RESHARD_EXECUTOR_RUN_PLAN_RUNNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/run/communicator_provider.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard::executor {

class BatchRunner;
struct BatchRunStats;
class MemorySpace;

// What one Run measured.
struct RunStats {
  std::vector<double> step_seconds;  // per plan step; 0 for skipped steps
  int64_t peak_bytes = 0;            // the most buffer bytes held at once
};

class PlanRunner {
 public:
  // Compiles `plan` for global `rank`. INVALID_ARGUMENT when the plan is
  // malformed (CheckPlanStructure) or `rank` is not in the mesh;
  // FAILED_PRECONDITION when the ranks' plan digests differ; the provider's
  // error when a communicator cannot be created. Collective: every rank of
  // the mesh compiles the same plan at the same time. `mesh` and `plan`
  // are copied. With `space` (which must outlive the runner) the plan runs
  // in that memory: a framework on GPUs passes a CudaMemorySpace made for
  // its device and its stream (nccl/cuda_memory_space.h), an NCCL provider,
  // and device pointers to Run, which enqueues the copies on that stream
  // and returns once they and the collectives are done.
  static absl::StatusOr<std::unique_ptr<PlanRunner>> Compile(
      const Mesh& mesh, const Plan& plan, int64_t rank,
      CommunicatorProvider& provider, MemorySpace* space = nullptr);

  // Runs the plan: `in` holds this rank's source tensor (SourceNumel()
  // elements, row-major, plan dtype), `out` receives its destination
  // tensor (ResultNumel() elements). `in` is not modified; `in` and `out`
  // must not overlap. The first failing collective's status is returned.
  absl::Status Run(const void* in, void* out, RunStats* stats = nullptr);

  int64_t SourceNumel() const;
  int64_t ResultNumel() const;
  // The most bytes any step holds (see the class comment).
  int64_t MemoryBoundBytes() const;
  int64_t position() const;
  const Plan& plan() const;
  const Mesh& mesh() const;

  ~PlanRunner();

 private:
  explicit PlanRunner(std::unique_ptr<BatchRunner> batch);

  // Behind pointers so that this installed header needs none of the
  // runner's internals (executor/run/batch_runner.h).
  std::unique_ptr<BatchRunner> batch_;
  std::unique_ptr<BatchRunStats> stats_;  // reused across runs
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_PLAN_RUNNER_H_
