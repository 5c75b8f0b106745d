// Several ranks on one GPU (docs/notes/2026-11-26-gpu-nccl-communicators.md,
// "On a GPU: NCCL communicators"): NCCL refuses two ranks of a communicator on
// the same device ("Duplicate GPU detected") unless each believes it is its own
// host. Every such rank is its own process with its own NCCL_HOSTID, and NCCL
// connects them over loopback sockets (no P2P, shared memory or InfiniBand).
// Correct, but the socket transport dominates the time: such timings are not
// representative. Pure: environment settings only, which must be made in
// the rank's process before CUDA or NCCL starts.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_SHARED_GPU_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_SHARED_GPU_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace reshard::executor {

// The environment a rank sharing a GPU needs: NCCL_HOSTID=`host_id` (unique
// per rank of the run) and the loopback socket transport.
std::vector<std::pair<std::string, std::string>> SharedGpuEnvironment(
    const std::string& host_id);

// Sets SharedGpuEnvironment in this process (overwriting).
void ShareGpu(const std::string& host_id);

// The GPU rank `rank` runs on when there are `gpus`: rank mod gpus.
inline int GpuOfRank(int64_t rank, int gpus) {
  return gpus > 0 ? static_cast<int>(rank % gpus) : 0;
}

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_SHARED_GPU_H_
