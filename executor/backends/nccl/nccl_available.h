// Whether this build can run the NCCL backend here: the header exists in
// every build so that callers (reshardctl exec, the GPU tests) can say
// clearly why NCCL is unavailable instead of crashing in CUDA. Builds
// without CUDA and NCCL link a stub that reports FAILED_PRECONDITION.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_AVAILABLE_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_AVAILABLE_H_

#include <string>

#include "absl/status/statusor.h"

namespace reshard::executor {

// What the CUDA runtime reports about this machine's GPUs.
struct GpuProbe {
  int count = 0;  // usable GPUs; 0 when the runtime cannot be used
  // Why none is usable, e.g. "cudaGetDeviceCount: cudaErrorInsufficientDriver
  // (CUDA driver version is insufficient for CUDA runtime version)";
  // empty when count > 0.
  std::string detail;
};

// The GPUs CUDA can use. cudaGetDeviceCount failing (no driver, no device)
// is 0 GPUs with the error in `detail`, not an error. FAILED_PRECONDITION
// when this build has no NCCL backend.
absl::StatusOr<GpuProbe> ProbeGpus();

// The NCCL and CUDA runtime versions this build compiled against and the
// ones the process loaded, e.g. "NCCL 2.28.9 (built with 2.28.9), CUDA
// runtime 13.0 (built with 13.0)". Needs no GPU. FAILED_PRECONDITION when
// this build has no NCCL backend.
absl::StatusOr<std::string> NcclRuntimeVersions();

// ProbeGpus()'s count.
absl::StatusOr<int> UsableGpuCount();

// ProbeGpus asked in a child process, for a process that forks ranks
// afterwards: CUDA must not start in it (a CUDA context does not survive
// fork). INTERNAL when the child gives no answer; FAILED_PRECONDITION when
// this build has no NCCL backend (then without a child).
absl::StatusOr<GpuProbe> ProbeGpusInChild();

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_AVAILABLE_H_
