// Where a run's buffers live and how its data movement runs there
// (docs/DESIGN.md §6.1). BatchRunner has one run path: at Compile it
// prepares every piece of the run in its space (a step, or a copy program
// that packs or unpacks a bucket), and at Run it runs them in order on the
// space's buffers, then waits once (the backend's Drain, then Synchronize).
// The spaces:
// - HostMemorySpace (executor/memory/host_memory_space.h): host memory moved
// by
//   the CPU, the Gloo backend's; the runner's own when none is given.
// - TableSpace (executor/memory/table_space.h): every copy compiled into a
//   DeviceCopyTable and enqueued, the path a GPU needs. The CUDA space runs
//   a table with one kernel launch
//   (executor/backends/nccl/cuda_memory_space.h); HostTableSpace runs it unit
//   by unit on host memory, so every machine tests the device path's logic.
#ifndef RESHARD_EXECUTOR_MEMORY_MEMORY_SPACE_H_
#define RESHARD_EXECUTOR_MEMORY_MEMORY_SPACE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace reshard::executor {

// Declared only, so that this installed header needs none of the runner's
// internals: a space's implementation includes executor/runtime/
// copy_buffers.h, copy_program.h and step_exec.h.
struct CompiledStep;
struct CopyBuffers;
struct CopyProgram;

// A piece of a run, prepared in a space at Compile.
class SpaceWork {
 public:
  virtual ~SpaceWork() = default;
  // Runs (in a device space: enqueues) the work on `buffers`, the space's
  // pointers, after everything run before. The collective's or the
  // space's error.
  virtual absl::Status Run(const CopyBuffers& buffers) const = 0;
};

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;

  // Names the space in errors and reports ("host", "cuda:0").
  virtual std::string name() const = 0;

  // `bytes` of the space's memory (a valid pointer even for 0 bytes);
  // RESOURCE_EXHAUSTED naming the size when it cannot be had.
  virtual absl::StatusOr<char*> Allocate(int64_t bytes) = 0;
  virtual void Free(char* buffer) = 0;

  // `step` (its communicator set for a collective) as work on the step's
  // input, output and wire buffers: what ExecuteStep does.
  virtual absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareStep(
      CompiledStep step) = 0;
  // `program` as work: what RunOnHost does.
  virtual absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareCopies(
      const CopyProgram& program) = 0;
  // Waits until everything run is done: once per run.
  virtual absl::Status Synchronize() = 0;

  // Timing (executor/run/run_timer.h): a mark is a timestamp taken after
  // the work run so far (on a GPU, a CUDA event), its index returned; Between
  // reads the seconds from one mark to another once Synchronize has returned;
  // ClearMarks forgets them when a run starts.
  virtual absl::StatusOr<int64_t> Mark() = 0;
  virtual absl::StatusOr<double> Between(int64_t from, int64_t to) = 0;
  virtual void ClearMarks() = 0;

  // Untimed transfers between host memory and this space, complete on
  // return (source data in, results out).
  virtual absl::Status Upload(char* to, const char* from, int64_t bytes) = 0;
  virtual absl::Status Download(char* to, const char* from, int64_t bytes) = 0;
};

// One allocation of a space, freed with it.
class SpaceBuffer {
 public:
  SpaceBuffer() = default;
  SpaceBuffer(MemorySpace* space, char* data) : space_(space), data_(data) {}
  SpaceBuffer(SpaceBuffer&& other) noexcept
      : space_(std::exchange(other.space_, nullptr)),
        data_(std::exchange(other.data_, nullptr)) {}
  SpaceBuffer& operator=(SpaceBuffer&& other) noexcept {
    std::swap(space_, other.space_);
    std::swap(data_, other.data_);
    return *this;
  }
  SpaceBuffer(const SpaceBuffer&) = delete;
  SpaceBuffer& operator=(const SpaceBuffer&) = delete;
  ~SpaceBuffer() {
    if (space_ != nullptr && data_ != nullptr) space_->Free(data_);
  }

  char* get() const { return data_; }

 private:
  MemorySpace* space_ = nullptr;
  char* data_ = nullptr;
};

// `bytes` of `space`, owned.
absl::StatusOr<SpaceBuffer> AllocateIn(MemorySpace& space, int64_t bytes);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_MEMORY_SPACE_H_
