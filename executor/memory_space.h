// Where a run's buffers live and how its data movement runs there
// (docs/DESIGN.md §6.1). The host path of BatchRunner needs none of this:
// it moves bytes with the CPU and lets the backend overlap packing with
// sending. A MemorySpace is the other path, the one a GPU needs: every
// copy a run makes is compiled once into a DeviceCopyTable
// (executor/device_copy_table.h) and enqueued in the space, the tensors
// and wire buffers are the space's, and the host waits once per run
// (the backend's Drain, then Synchronize). HostTableSpace runs the same tables
// on host memory so every machine tests the device path's logic; the CUDA space
// runs them with one kernel launch each (executor/nccl/cuda_memory_space.h).
#ifndef RESHARD_EXECUTOR_MEMORY_SPACE_H_
#define RESHARD_EXECUTOR_MEMORY_SPACE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/copy_program.h"
#include "executor/device_copy_table.h"

namespace reshard::executor {

// A table made ready to run in a space (on a GPU: its ops and loops
// uploaded once, at compile time). Owned by the space that prepared it.
struct PreparedTable {
  DeviceCopyTable table;
  const void* device_ops = nullptr;   // the space's copy of table.ops
  const void* device_dims = nullptr;  // the space's copy of table.dims
};

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;

  // Names the space in errors and reports ("host tables", "cuda:0").
  virtual std::string name() const = 0;

  // `bytes` of the space's memory (a valid pointer even for 0 bytes);
  // RESOURCE_EXHAUSTED naming the size when it cannot be had.
  virtual absl::StatusOr<char*> Allocate(int64_t bytes) = 0;
  virtual void Free(char* buffer) = 0;

  // Makes `table` runnable here; the result lives as long as the space.
  virtual absl::StatusOr<const PreparedTable*> Prepare(
      DeviceCopyTable table) = 0;
  // Enqueues the table's fills, then its copies, on `buffers` (this
  // space's pointers), after everything enqueued before.
  virtual absl::Status Run(const PreparedTable& table,
                           const CopyBuffers& buffers) = 0;
  // Waits until everything enqueued is done: once per run.
  virtual absl::Status Synchronize() = 0;

  // Timing (executor/run_timer.h): a mark is a timestamp enqueued after the
  // work enqueued so far (on a GPU, a CUDA event), its index returned;
  // Between reads the seconds from one mark to another once Synchronize
  // has returned; ClearMarks forgets them when a run starts.
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

// Encodes `program` for the device and prepares it in `space`.
absl::StatusOr<const PreparedTable*> PrepareProgram(MemorySpace& space,
                                                    const CopyProgram& program);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_SPACE_H_
