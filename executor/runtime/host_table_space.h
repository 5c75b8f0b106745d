// The device path's logic on host memory: a TableSpace whose buffers are
// host allocations and whose tables run unit by unit (RunTableOnHost), as
// the CUDA kernel runs them. With a host backend (Gloo) it runs whole
// plans and batches the way a GPU does, so tests on every machine hold
// the device path to the host path and the reference simulator.
#ifndef RESHARD_EXECUTOR_RUNTIME_HOST_TABLE_SPACE_H_
#define RESHARD_EXECUTOR_RUNTIME_HOST_TABLE_SPACE_H_

#include <deque>
#include <string>

#include "absl/strings/string_view.h"
#include "executor/runtime/host_memory.h"
#include "executor/runtime/table_space.h"

namespace reshard::executor {

class HostTableSpace : public TableSpace {
 public:
  std::string name() const override { return std::string(kName); }
  absl::StatusOr<char*> Allocate(int64_t bytes) override {
    return memory_.Allocate(bytes);
  }
  void Free(char* buffer) override { HostMemory::Free(buffer); }
  absl::StatusOr<const PreparedTable*> PrepareTable(
      DeviceCopyTable table) override;
  absl::Status RunTable(const PreparedTable& table,
                        const CopyBuffers& buffers) override;
  absl::Status Synchronize() override;
  absl::StatusOr<int64_t> Mark() override { return memory_.Mark(); }
  absl::StatusOr<double> Between(int64_t from, int64_t to) override {
    return memory_.Between(from, to);
  }
  void ClearMarks() override { memory_.ClearMarks(); }
  absl::Status Upload(char* to, const char* from, int64_t bytes) override {
    return HostMemory::Copy(to, from, bytes);
  }
  absl::Status Download(char* to, const char* from, int64_t bytes) override {
    return HostMemory::Copy(to, from, bytes);
  }

  // How many tables ran and how many times the host waited (tests count
  // them: one wait per run).
  int64_t tables_run() const { return tables_run_; }
  int64_t synchronizations() const { return synchronizations_; }

 private:
  static constexpr absl::string_view kName = "host tables";
  HostMemory memory_{kName};
  std::deque<PreparedTable> tables_;
  int64_t tables_run_ = 0;
  int64_t synchronizations_ = 0;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUNTIME_HOST_TABLE_SPACE_H_
