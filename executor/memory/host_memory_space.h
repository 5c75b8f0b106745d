// Host memory moved by the CPU: the space of the Gloo backend, and the one
// a BatchRunner makes for itself when given none. A step runs as
// ExecuteStep does (the backend may overlap all_to_all packing with the
// exchange), a copy program as RunOnHost does. Everything is done when Run
// returns, so Synchronize has nothing to wait for and marks are the host
// clock.
#ifndef RESHARD_EXECUTOR_MEMORY_HOST_MEMORY_SPACE_H_
#define RESHARD_EXECUTOR_MEMORY_HOST_MEMORY_SPACE_H_

#include <memory>

#include "executor/memory/host_memory.h"
#include "executor/memory/memory_space.h"
#include "executor/run/copy_program.h"

namespace reshard::executor {

class HostMemorySpace : public OnHostMemory<MemorySpace> {
 public:
  HostMemorySpace() : OnHostMemory("host") {}

  absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareStep(
      CompiledStep step) override;
  absl::StatusOr<std::unique_ptr<SpaceWork>> PrepareCopies(
      const CopyProgram& program) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_HOST_MEMORY_SPACE_H_
