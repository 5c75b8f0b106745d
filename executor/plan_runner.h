// A PlanRunner is one rank's compiled form of a plan (DESIGN §6.1): the
// plan's structure checked once, its per-step layouts computed, its
// communicators obtained and the ranks' plan digests compared, so that Run
// does nothing but move data. Compile once, run many times on the caller's
// own buffers: no validation, no planning and no allocation after the first
// run on that path.
//
// Memory: a step holds its input and output tensors plus its packed wire
// buffers where the blocks cannot be sent or received in place. The runner
// computes that bound from the layouts (never from a plan's `peak_bytes`)
// and measures what it holds (RunStats::peak_bytes).
//
// Not thread-safe: one Run at a time per runner.
#ifndef RESHARD_EXECUTOR_PLAN_RUNNER_H_
#define RESHARD_EXECUTOR_PLAN_RUNNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/communicator_provider.h"
#include "executor/step_exec.h"
#include "planner/mesh.h"
#include "planner/plan.h"
#include "planner/step_layout.h"

namespace reshard::executor {

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
  // are copied.
  static absl::StatusOr<std::unique_ptr<PlanRunner>> Compile(
      const Mesh& mesh, const Plan& plan, int64_t rank,
      CommunicatorProvider& provider);

  // Runs the plan: `in` holds this rank's source tensor (SourceNumel()
  // elements, row-major, plan dtype), `out` receives its destination
  // tensor (ResultNumel() elements). `in` is not modified; `in` and `out`
  // must not overlap. The first failing collective's status is returned.
  absl::Status Run(const void* in, void* out, RunStats* stats = nullptr);

  int64_t SourceNumel() const { return source_numel_; }
  int64_t ResultNumel() const { return result_numel_; }
  // The most bytes any step holds (see the class comment).
  int64_t MemoryBoundBytes() const { return memory_bound_; }
  int64_t position() const { return position_; }
  const Plan& plan() const { return plan_; }
  const Mesh& mesh() const { return mesh_; }

  ~PlanRunner();

 private:
  PlanRunner(const Mesh& mesh, const Plan& plan, int64_t position);

  Mesh mesh_;
  Plan plan_;
  int64_t position_;
  int64_t source_numel_ = 0;
  int64_t result_numel_ = 0;
  int64_t memory_bound_ = 0;
  std::vector<CompiledStep> steps_;
  // Reused across runs: two tensors the steps alternate between, and the
  // packed wire buffers.
  std::vector<char> tensors_[2];
  std::vector<char> wire_in_, wire_out_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_PLAN_RUNNER_H_
