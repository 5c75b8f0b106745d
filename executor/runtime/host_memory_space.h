// Host memory moved by the CPU: the space of the Gloo backend, and the one
// a BatchRunner makes for itself when given none. A step runs as
// ExecuteStep does (the backend may overlap all_to_all packing with the
// exchange), a copy program as RunOnHost does. Everything is done when Run
// returns, so Synchronize has nothing to wait for and marks are the host
// clock.
#ifndef RESHARD_EXECUTOR_RUNTIME_HOST_MEMORY_SPACE_H_
#define RESHARD_EXECUTOR_RUNTIME_HOST_MEMORY_SPACE_H_

#include <memory>
#include <string>

#include "executor/runtime/copy_program.h"
#include "executor/runtime/host_memory.h"
#include "executor/runtime/memory_space.h"

namespace reshard::executor {

class HostMemorySpace : public MemorySpace {
 public:
  std::string name() const override { return std::string(kName); }
  absl::StatusOr<char*> Allocate(int64_t bytes) override {
    return memory_.Allocate(bytes);
  }
  void Free(char* buffer) override { HostMemory::Free(buffer); }
  absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareStep(
      CompiledStep step) override;
  absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareCopies(
      const CopyProgram& program) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }
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

 private:
  static constexpr absl::string_view kName = "host";
  HostMemory memory_{kName};
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUNTIME_HOST_MEMORY_SPACE_H_
