// The build with CUDA and NCCL: asks the CUDA runtime.
#include "executor/nccl/nccl_available.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"

namespace reshard::executor {

absl::StatusOr<GpuProbe> ProbeGpus() {
  GpuProbe probe;
  // cudaGetDeviceCount leaves the count unwritten when it fails (no driver,
  // toolkit/driver mismatch): start from 0.
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    probe.detail = absl::StrCat("cudaGetDeviceCount: ", cudaGetErrorName(e),
                                " (", cudaGetErrorString(e), ")");
    return probe;
  }
  probe.count = count;
  if (count <= 0) {
    probe.count = 0;
    probe.detail = "cudaGetDeviceCount: 0 devices";
  }
  return probe;
}

absl::StatusOr<int> UsableGpuCount() {
  absl::StatusOr<GpuProbe> probe = ProbeGpus();
  if (!probe.ok()) return probe.status();
  return probe->count;
}

}  // namespace reshard::executor
