#include "executor/backends/nccl/nccl_backend.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "executor/backends/nccl/cuda_memory_space.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/backends/nccl/nccl_communicator.h"
#include "executor/backends/nccl/shared_gpu.h"

namespace reshard::executor {
absl::StatusOr<int> ChooseDevice(int64_t rank, int asked) {
  absl::StatusOr<GpuProbe> probe = ProbeGpus();
  if (!probe.ok()) return probe.status();
  if (probe->count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no usable GPU (", probe->detail, ")"));
  }
  if (asked >= probe->count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device: ", asked, " is not one of the ", probe->count, " GPUs"));
  }
  return asked >= 0 ? asked : GpuOfRank(rank, probe->count);
}

std::unique_ptr<CommunicatorProvider> OpenNcclCommunicators(
    std::shared_ptr<KeyValueStore> store, std::string prefix, int64_t rank,
    int64_t world_size, std::chrono::milliseconds timeout, int device) {
  return std::make_unique<NcclCommunicatorProvider>(
      std::move(store), std::move(prefix), rank, world_size,
      NcclOptions{timeout, device});
}

absl::StatusOr<std::unique_ptr<MemorySpace>> MakeDeviceSpace(int device) {
  absl::StatusOr<std::unique_ptr<CudaMemorySpace>> space =
      CudaMemorySpace::Create(device);
  if (!space.ok()) return space.status();
  return std::unique_ptr<MemorySpace>(*std::move(space));
}

absl::StatusOr<int64_t> DeviceMemoryBytes(int device) {
  size_t free_bytes = 0, total_bytes = 0;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (e != cudaSuccess) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cudaMemGetInfo on device ", device, ": ", cudaGetErrorString(e)));
  }
  return static_cast<int64_t>(total_bytes);
}

}  // namespace reshard::executor
