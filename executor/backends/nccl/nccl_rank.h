// One rank's whole run on the NCCL backend (docs/DESIGN.md §6.1): its
// communicators (NcclCommunicatorProvider over the run's store), its data in
// device memory (CudaMemorySpace on the legacy default stream), and
// RunRank on both. What reshardctl exec and the agent call for
// `--backend nccl`; the header needs no CUDA, and a build without NCCL
// links a stub whose report says so (FAILED_PRECONDITION).
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_RANK_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_RANK_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "executor/runtime/communicator_provider.h"
#include "executor/runtime/memory_space.h"
#include "executor/runtime/rank_run.h"
#include "executor/stores/key_value_store.h"
#include "planner/core/mesh.h"
#include "run_values/batch_work.h"
#include "run_values/rank_report.h"

namespace reshard::executor {

struct NcclRankSetup {
  std::chrono::milliseconds timeout{30000};  // every call and store wait
  int device = -1;  // the CUDA device; -1: global rank mod the GPU count
  // Ranks outnumber GPUs: this process becomes its own NCCL host
  // (nccl/shared_gpu.h). Call in a fresh process, before CUDA starts.
  bool shared_gpu = false;
  std::string host_id;  // with shared_gpu: unique per rank of the run
};

// The device global `rank` uses: `asked` (checked against the GPU count),
// or with -1 the rank mod the GPU count. FAILED_PRECONDITION without a
// usable GPU or without NCCL in this build, naming why; INVALID_ARGUMENT
// naming `device` for a device that is not there.
absl::StatusOr<int> ChooseDevice(int64_t rank, int asked);

// The pieces of a long-lived NCCL rank (an agent): its communicators,
// opened through `store` under `prefix`, and its device memory.
std::unique_ptr<CommunicatorProvider> MakeNcclProvider(
    std::shared_ptr<KeyValueStore> store, std::string prefix, int64_t rank,
    int64_t world_size, std::chrono::milliseconds timeout, int device);
absl::StatusOr<std::unique_ptr<MemorySpace>> MakeDeviceSpace(int device);
// The total memory of GPU `device`, in bytes (an agent's --max_run_bytes
// auto bound is a share of it).
absl::StatusOr<int64_t> DeviceMemoryBytes(int device);

// Runs `work` on global `rank` of `mesh`; `store` is shared by every rank
// of the run and `prefix` keeps runs apart. `options.space` is ignored:
// the rank's device memory is its own.
RankReport RunNcclRank(const Mesh& mesh, const BatchWork& work, int64_t rank,
                       std::shared_ptr<KeyValueStore> store,
                       const std::string& prefix, const NcclRankSetup& setup,
                       RankOptions options);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_RANK_H_
