// Device memory for the NCCL backend (docs/DESIGN.md §6.1): a TableSpace
// whose buffers are cudaMalloc'd on one device and whose copy tables are
// uploaded once at compile time and run with one kernel launch each
// (nccl/copy_kernel.h), their zero fills as cudaMemsetAsync, on the
// caller's stream (the legacy default stream unless one is given). The NCCL
// provider given the same stream (NcclOptions::stream) orders its
// collectives with these copies by CUDA events, so a run waits on the host
// only at its end (Drain, then Synchronize for the copies after the last
// collective).
// The header is CUDA-free (the stream is CUDA's opaque CUstream_st*, what
// cudaStream_t is), so the product's adapters include it without CUDA.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_CUDA_MEMORY_SPACE_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_CUDA_MEMORY_SPACE_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "executor/memory/table_space.h"

struct CUstream_st;
struct CUevent_st;

namespace reshard::executor {

class CudaMemorySpace : public TableSpace {
 public:
  // The space of `device` whose copies run on `stream` (null: the legacy
  // default stream). FAILED_PRECONDITION when the device cannot be used.
  static absl::StatusOr<std::unique_ptr<CudaMemorySpace>> Create(
      int device, CUstream_st* stream = nullptr);
  ~CudaMemorySpace() override;  // frees the prepared tables

  std::string name() const override;
  absl::StatusOr<char*> Allocate(int64_t bytes) override;
  void Free(char* buffer) override;
  absl::StatusOr<const PreparedTable*> PrepareTable(
      DeviceCopyTable table) override;
  absl::Status RunTable(const PreparedTable& table,
                        const CopyBuffers& buffers) override;
  absl::Status Synchronize() override;
  // Marks are CUDA events from a pool kept across runs.
  absl::StatusOr<int64_t> Mark() override;
  absl::StatusOr<double> Between(int64_t from, int64_t to) override;
  void ClearMarks() override { marks_used_ = 0; }
  absl::Status Upload(char* to, const char* from, int64_t bytes) override;
  absl::Status Download(char* to, const char* from, int64_t bytes) override;

  int device() const { return device_; }
  // How many times the host waited for the stream (tests: once per run).
  int64_t synchronizations() const { return synchronizations_; }

 private:
  CudaMemorySpace(int device, CUstream_st* stream)
      : device_(device), stream_(stream) {}

  int device_;
  CUstream_st* stream_;
  std::deque<PreparedTable> tables_;
  std::vector<void*> table_memory_;  // every prepared table's device copies
  std::vector<CUevent_st*> events_;  // the mark pool (cudaEvent_t)
  size_t marks_used_ = 0;
  int64_t synchronizations_ = 0;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_CUDA_MEMORY_SPACE_H_
