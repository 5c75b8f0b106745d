#include "executor/memory/host_memory_space.h"

#include <utility>

namespace reshard::executor {
namespace {

class HostStep : public SpaceWork {
 public:
  explicit HostStep(CompiledStep step) : step_(std::move(step)) {}
  absl::Status Run(const CopyBuffers& buffers) const override {
    return ExecuteStep(step_, buffers.in, buffers.out,
                       {buffers.wire_in, buffers.wire_out});
  }

 private:
  CompiledStep step_;
};

class HostCopies : public SpaceWork {
 public:
  explicit HostCopies(CopyProgram program) : program_(std::move(program)) {}
  absl::Status Run(const CopyBuffers& buffers) const override {
    RunOnHost(program_, buffers);
    return absl::OkStatus();
  }

 private:
  CopyProgram program_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SpaceWork>> HostMemorySpace::PrepareStep(
    CompiledStep step) {
  return std::make_unique<HostStep>(std::move(step));
}

absl::StatusOr<std::unique_ptr<SpaceWork>> HostMemorySpace::PrepareCopies(
    const CopyProgram& program) {
  return std::make_unique<HostCopies>(program);
}

}  // namespace reshard::executor
