// The build without CUDA and NCCL: no rank runs on NCCL.
#include "executor/backends/nccl/nccl_backend.h"

namespace reshard::executor {
namespace {

constexpr char kNoNccl[] =
    "this build has no NCCL backend (CUDA and NCCL were not found when it "
    "was configured)";

class NoNcclProvider : public CommunicatorProvider {
 public:
  absl::StatusOr<Communicator*> Get(const std::vector<int64_t>&,
                                    absl::string_view) override {
    return absl::FailedPreconditionError(kNoNccl);
  }
};

}  // namespace

absl::StatusOr<int> ChooseDevice(int64_t, int) {
  return absl::FailedPreconditionError(kNoNccl);
}

std::unique_ptr<CommunicatorProvider> OpenNcclCommunicators(
    std::shared_ptr<KeyValueStore>, std::string, int64_t, int64_t,
    std::chrono::milliseconds, int) {
  return std::make_unique<NoNcclProvider>();
}

absl::StatusOr<std::unique_ptr<MemorySpace>> MakeDeviceSpace(int) {
  return absl::FailedPreconditionError(kNoNccl);
}

absl::StatusOr<int64_t> DeviceMemoryBytes(int) {
  return absl::FailedPreconditionError(kNoNccl);
}

}  // namespace reshard::executor
