// The NCCL backend's one entry point (docs/DESIGN.md §6.1), reached through
// the provider factory (executor/backends/provider_factory.h): a rank's
// communicators (NcclCommunicatorProvider over the run's store) and its
// device memory (CudaMemorySpace on the legacy default stream). The header
// needs no CUDA, and a build without NCCL links a stub that says so
// (FAILED_PRECONDITION).
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_BACKEND_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_BACKEND_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "executor/memory/memory_space.h"
#include "executor/run/communicator_provider.h"
#include "executor/stores/key_value_store.h"

namespace reshard::executor {

// The device global `rank` uses: `asked` (checked against the GPU count),
// or with -1 the rank mod the GPU count. FAILED_PRECONDITION without a
// usable GPU or without NCCL in this build, naming why; INVALID_ARGUMENT
// naming `device` for a device that is not there.
absl::StatusOr<int> ChooseDevice(int64_t rank, int asked);

// A rank's communicators, opened through `store` under `prefix` on GPU
// `device`, and its device memory.
std::unique_ptr<CommunicatorProvider> OpenNcclCommunicators(
    std::shared_ptr<KeyValueStore> store, std::string prefix, int64_t rank,
    int64_t world_size, std::chrono::milliseconds timeout, int device);
absl::StatusOr<std::unique_ptr<MemorySpace>> MakeDeviceSpace(int device);
// The total memory of GPU `device`, in bytes (an agent's --max_run_bytes
// auto bound is a share of it).
absl::StatusOr<int64_t> DeviceMemoryBytes(int device);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_BACKEND_H_
