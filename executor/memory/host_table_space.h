// The device path's logic on host memory: a TableSpace whose buffers are
// host allocations and whose tables run unit by unit (RunTableOnHost), as
// the CUDA kernel runs them. With a host backend (Gloo) it runs whole
// plans and batches the way a GPU does, so tests on every machine hold
// the device path to the host path and the reference simulator.
#ifndef RESHARD_EXECUTOR_MEMORY_HOST_TABLE_SPACE_H_
#define RESHARD_EXECUTOR_MEMORY_HOST_TABLE_SPACE_H_

#include <deque>

#include "executor/memory/host_memory.h"
#include "executor/memory/table_space.h"

namespace reshard::executor {

class HostTableSpace : public OnHostMemory<TableSpace> {
 public:
  HostTableSpace() : OnHostMemory("host tables") {}

  absl::StatusOr<const PreparedTable*> PrepareTable(
      DeviceCopyTable table) override;
  absl::Status RunTable(const PreparedTable& table,
                        const CopyBuffers& buffers) override;
  absl::Status Synchronize() override;

  // How many tables ran and how many times the host waited (tests count
  // them: one wait per run).
  int64_t tables_run() const { return tables_run_; }
  int64_t synchronizations() const { return synchronizations_; }

 private:
  std::deque<PreparedTable> tables_;
  int64_t tables_run_ = 0;
  int64_t synchronizations_ = 0;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_HOST_TABLE_SPACE_H_
