// The build without CUDA and NCCL: no NCCL backend.
#include "absl/status/status.h"
#include "executor/backends/nccl/nccl_available.h"

namespace reshard::executor {

absl::StatusOr<GpuProbe> ProbeGpus() {
  return absl::FailedPreconditionError(
      "this build has no NCCL backend (CUDA and NCCL were not found when it "
      "was configured)");
}

absl::StatusOr<GpuProbe> ProbeGpusInChild() { return ProbeGpus(); }

absl::StatusOr<std::string> NcclRuntimeVersions() {
  return ProbeGpus().status();
}

absl::StatusOr<int> UsableGpuCount() {
  absl::StatusOr<GpuProbe> probe = ProbeGpus();
  if (!probe.ok()) return probe.status();
  return probe->count;
}

}  // namespace reshard::executor
