// The device path's logic on host memory: a MemorySpace whose buffers are
// host allocations and whose tables run unit by unit (RunTableOnHost), as
// the CUDA kernel runs them. With a host backend (Gloo) it runs whole
// plans and batches the way a GPU does, so tests on every machine hold
// the device path to the host path and the reference simulator.
#ifndef RESHARD_EXECUTOR_HOST_TABLE_SPACE_H_
#define RESHARD_EXECUTOR_HOST_TABLE_SPACE_H_

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "executor/memory_space.h"

namespace reshard::executor {

class HostTableSpace : public MemorySpace {
 public:
  std::string name() const override { return "host tables"; }
  absl::StatusOr<char*> Allocate(int64_t bytes) override;
  void Free(char* buffer) override;
  absl::StatusOr<const PreparedTable*> Prepare(DeviceCopyTable table) override;
  absl::Status Run(const PreparedTable& table,
                   const CopyBuffers& buffers) override;
  absl::Status Synchronize() override;
  absl::StatusOr<int64_t> Mark() override;
  absl::StatusOr<double> Between(int64_t from, int64_t to) override;
  void ClearMarks() override { marks_.clear(); }
  absl::Status Upload(char* to, const char* from, int64_t bytes) override;
  absl::Status Download(char* to, const char* from, int64_t bytes) override;

  // How many tables ran and how many times the host waited (tests count
  // them: one wait per run).
  int64_t tables_run() const { return tables_run_; }
  int64_t synchronizations() const { return synchronizations_; }

 private:
  std::deque<PreparedTable> tables_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
  int64_t tables_run_ = 0;
  int64_t synchronizations_ = 0;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_HOST_TABLE_SPACE_H_
