// A BatchRunner is one rank's compiled form of a batch and its bucketed
// schedule (docs/DESIGN.md §8), and the one run path of the executor: a single
// plan is a batch of one run by UnbucketedSchedule (PlanRunner is that
// convenience). Every bucket runs as one collective over its
// members' packed blocks (planner/batch/bucket_layout.h), each tensor's local
// steps run at their point in its order, and every tensor ends with
// exactly what its own plan leaves (PlanRunner's result). Compile checks
// the plans and the schedule, computes every layout, obtains the
// communicators and compares the ranks' batch digests; Run only moves data.
//
// Memory: every tensor of the batch is live between buckets, so each holds
// two buffers of its largest intermediate result (its final step writes to
// the caller's output); the packed wire buffers of the largest bucket are
// shared by all buckets. MemoryBoundBytes is their total.
//
// A bucket of one step runs exactly as the step alone (executor/
// step_exec.h), so an unbucketable batch costs what tensor by tensor does.
// Errors name a tensor's step as "tensors[t].steps[j] (op on group)" and a
// bucket of several as "buckets[b] (...)"; a batch of one tensor is a plan,
// so its steps are named "steps[j]" and its digest "plan".
// Data movement buckets may mix dtypes: they move bytes, counted in 16-bit
// words (every dtype's size is a multiple of 2). Reduction buckets hold one
// dtype and reduce in it.
//
// Where data lives: in a MemorySpace (executor/memory/memory_space.h), host
// memory when none is given. At Compile every piece of the run (each local
// step, each bucket's step or its members' packing and unpacking, the copy
// of a tensor no step moves) is prepared in the space, the runner's buffers
// are the space's, and the caller's `in` and `out` must be too. Run runs
// the pieces in order, each collective after the copies before it (on a
// device: ordered by the backend), and waits once at its end: for its
// collectives (CommunicatorProvider::Drain), then for what the space still
// runs (MemorySpace::Synchronize). On host memory a step runs as
// ExecuteStep does and everything is done when its call returns.
//
// Not thread-safe: one Run at a time per runner.
#ifndef RESHARD_EXECUTOR_RUN_BATCH_RUNNER_H_
#define RESHARD_EXECUTOR_RUN_BATCH_RUNNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "executor/memory/memory_space.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/copy_program.h"
#include "executor/run/preflight.h"
#include "executor/run/run_timer.h"
#include "planner/batch/bucket_layout.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard::executor {

// What one Run measured.
struct BatchRunStats {
  // Per bucket: packing its members' blocks, the collective, unpacking.
  std::vector<double> bucket_seconds;
  double local_seconds = 0;  // every tensor's local steps
  double total_seconds = 0;  // the whole batch
  // Per tensor, per step: its local work, or the bucket that ran it (0 for
  // a step on a group of size 1, which moves nothing).
  std::vector<std::vector<double>> step_seconds;
  // The most bytes one step or bucket held at once: its inputs, outputs
  // and packed wire buffers.
  int64_t peak_bytes = 0;
};

class BatchRunner {
 public:
  // Compiles `plans` and `schedule` for global `rank`. INVALID_ARGUMENT
  // when a plan is malformed (`tensors[t].` before CheckPlanStructure's
  // message), the schedule does not fit the plans (CheckBucketSchedule) or
  // `rank` is not in the mesh; the pre-flight step's verdict
  // (executor/run/preflight.h: FAILED_PRECONDITION when the ranks' batch
  // digests differ, a binding's refusal); the provider's error (naming the
  // bucket) when a communicator cannot be created; the space's error when
  // its buffers or tables cannot be had. Collective: every rank of the mesh
  // compiles the same batch at the same time. `space`, when given, outlives
  // the runner; null means host memory (a HostMemorySpace of the runner's
  // own). `preflight`, when given, carries this rank's binding in and the
  // step's outcome out; null: nothing to bind.
  static absl::StatusOr<std::unique_ptr<BatchRunner>> Compile(
      const Mesh& mesh, std::vector<Plan> plans, BucketSchedule schedule,
      int64_t rank, CommunicatorProvider& provider,
      MemorySpace* space = nullptr, Preflight* preflight = nullptr);

  // Runs the batch: `in[t]` holds tensor t's source (SourceNumel(t)
  // elements, row-major, its dtype), `out[t]` receives its destination
  // (ResultNumel(t) elements). Inputs are not modified and must not
  // overlap outputs. The first failing collective's status is returned,
  // naming the bucket.
  absl::Status Run(absl::Span<const void* const> in,
                   absl::Span<void* const> out, BatchRunStats* stats = nullptr);

  int64_t SourceNumel(size_t t) const;
  int64_t ResultNumel(size_t t) const;
  int64_t MemoryBoundBytes() const { return memory_bound_; }
  // The most bytes any one step or bucket holds (BatchRunStats::peak_bytes
  // never exceeds it).
  int64_t StepBoundBytes() const { return step_bound_; }
  // The runs that completed.
  int executions() const { return executions_; }
  const Mesh& mesh() const { return mesh_; }
  int64_t position() const { return position_; }
  const std::vector<Plan>& plans() const { return plans_; }
  const BucketSchedule& schedule() const { return schedule_; }

  struct TensorState;     // one tensor's layouts, buffers and progress
  struct CompiledBucket;  // one bucket's layout and communicator
  ~BatchRunner();

 private:
  BatchRunner(const Mesh& mesh, std::vector<Plan> plans,
              BucketSchedule schedule, int64_t position,
              CommunicatorProvider& provider, MemorySpace& space,
              std::unique_ptr<MemorySpace> own_space);
  // Compile's phases: layouts and sizes, the tensors' local work in the
  // space, buckets with their communicators and work, the buffers.
  void CompileTensors();
  absl::Status PrepareTensors();
  absl::Status CompileBuckets(CommunicatorProvider& provider);
  absl::Status CompileSingle(CompiledBucket& c, const BucketMember& m);
  absl::Status CompileShared(CompiledBucket& c, const Bucket& bucket);
  absl::Status AllocateBuffers();

  // Run's phases.
  void StartRun(absl::Span<const void* const> in, absl::Span<void* const> out,
                BatchRunStats& st);
  // Runs tensor t's steps before `until` that move no data between ranks.
  absl::Status AdvanceLocal(size_t t, int until, BatchRunStats& stats);
  absl::Status RunBucket(size_t b, BatchRunStats& stats);
  absl::Status RunSingle(size_t b);  // a bucket of one step
  absl::Status RunShared(size_t b);  // a bucket of several
  absl::Status FinishRun(absl::Span<const void* const> in, BatchRunStats& st);
  // The four buffers of a piece of work: `in` and `out`, and the wires.
  CopyBuffers On(const char* in, char* out) const;
  // How errors name tensor t ("" when the batch is one plan) and a step.
  std::string TensorLabel(size_t t) const;
  std::string StepLabel(const BucketMember& m) const;

  Mesh mesh_;
  std::vector<Plan> plans_;
  BucketSchedule schedule_;
  int64_t position_;
  CommunicatorProvider* provider_;  // Compile's: it owns the communicators
  std::unique_ptr<MemorySpace> own_space_;  // host memory, when given none
  MemorySpace* space_;
  RunTimer timer_;
  int64_t memory_bound_ = 0;
  int64_t step_bound_ = 0;
  int executions_ = 0;
  std::vector<TensorState> tensors_;
  std::vector<CompiledBucket> buckets_;
  // The largest bucket's packed wire buffers, in and out.
  int64_t wire_bytes_[2] = {0, 0};
  SpaceBuffer wire_[2];
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_BATCH_RUNNER_H_
