// The build with CUDA and NCCL: asks the CUDA runtime.
#include "executor/backends/nccl/nccl_available.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/launch/local_launch.h"

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

namespace {

// NCCL_VERSION_CODE's form since 2.9: major * 10000 + minor * 100 + patch.
std::string NcclVersionText(int code) {
  return absl::StrCat(code / 10000, ".", code / 100 % 100, ".", code % 100);
}

// CUDART_VERSION's form: major * 1000 + minor * 10.
std::string CudaVersionText(int code) {
  return absl::StrCat(code / 1000, ".", code % 1000 / 10);
}

}  // namespace

absl::StatusOr<std::string> NcclRuntimeVersions() {
  int nccl = 0;
  const ncclResult_t n = ncclGetVersion(&nccl);
  if (n != ncclSuccess) {
    return absl::InternalError(
        absl::StrCat("ncclGetVersion: ", ncclGetErrorString(n)));
  }
  int cuda = 0;
  const cudaError_t c = cudaRuntimeGetVersion(&cuda);
  if (c != cudaSuccess) {
    return absl::InternalError(
        absl::StrCat("cudaRuntimeGetVersion: ", cudaGetErrorName(c)));
  }
  return absl::StrCat("NCCL ", NcclVersionText(nccl), " (built with ",
                      NcclVersionText(NCCL_VERSION_CODE), "), CUDA runtime ",
                      CudaVersionText(cuda), " (built with ",
                      CudaVersionText(CUDART_VERSION), ")");
}

absl::StatusOr<GpuProbe> ProbeGpusInChild() {
  auto body = [](int) {
    absl::StatusOr<GpuProbe> probe = ProbeGpus();
    if (!probe.ok()) return std::string("-1\t");
    return absl::StrCat(probe->count, "\t", probe->detail);
  };
  absl::StatusOr<std::vector<ChildResult>> child =
      RunLocalRanks(1, body, std::chrono::seconds(60));
  if (!child.ok()) return child.status();
  const std::pair<std::string, std::string> parts =
      absl::StrSplit((*child)[0].output, absl::MaxSplits('\t', 1));
  GpuProbe probe;
  probe.detail = parts.second;
  if (!absl::SimpleAtoi(parts.first, &probe.count) || probe.count < 0) {
    return absl::InternalError(absl::StrCat(
        "the GPU probe ended without an answer (exit status ",
        (*child)[0].exit_code, ", signal ", (*child)[0].signal, ")"));
  }
  return probe;
}

absl::StatusOr<int> UsableGpuCount() {
  absl::StatusOr<GpuProbe> probe = ProbeGpus();
  if (!probe.ok()) return probe.status();
  return probe->count;
}

}  // namespace reshard::executor
