#include "executor/backends/nccl/cuda_memory_space.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "executor/backends/nccl/copy_kernel.h"

namespace reshard::executor {
namespace {

absl::Status CudaError(absl::string_view space, absl::string_view call,
                       cudaError_t e) {
  const std::string text =
      absl::StrCat(space, ": ", call, ": ", cudaGetErrorName(e), " (",
                   cudaGetErrorString(e), ")");
  return e == cudaErrorMemoryAllocation ? absl::ResourceExhaustedError(text)
                                        : absl::InternalError(text);
}

// The stream copies run on: the caller's, or the legacy default stream.
cudaStream_t StreamOf(CUstream_st* stream) {
  return stream != nullptr ? stream : cudaStreamLegacy;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaMemorySpace>> CudaMemorySpace::Create(
    int device, CUstream_st* stream) {
  const cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", device, ": cudaSetDevice: ", cudaGetErrorName(e),
                     " (", cudaGetErrorString(e), ")"));
  }
  return std::unique_ptr<CudaMemorySpace>(new CudaMemorySpace(device, stream));
}

CudaMemorySpace::~CudaMemorySpace() {
  cudaSetDevice(device_);
  for (void* p : table_memory_) cudaFree(p);
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

std::string CudaMemorySpace::name() const {
  return absl::StrCat("cuda:", device_);
}

absl::StatusOr<char*> CudaMemorySpace::Allocate(int64_t bytes) {
  cudaSetDevice(device_);
  void* data = nullptr;
  const cudaError_t e =
      cudaMalloc(&data, static_cast<size_t>(bytes > 0 ? bytes : 1));
  if (e != cudaSuccess) {
    return CudaError(name(), absl::StrCat("cudaMalloc of ", bytes, " bytes"),
                     e);
  }
  return static_cast<char*>(data);
}

void CudaMemorySpace::Free(char* buffer) {
  cudaSetDevice(device_);
  cudaFree(buffer);
}

absl::StatusOr<const PreparedTable*> CudaMemorySpace::PrepareTable(
    DeviceCopyTable table) {
  PreparedTable& prepared = tables_.emplace_back();
  prepared.table = std::move(table);
  const DeviceCopyTable& t = prepared.table;
  const void* sources[2] = {t.ops.data(), t.dims.data()};
  const size_t sizes[2] = {t.ops.size() * sizeof(DeviceCopyOp),
                           t.dims.size() * sizeof(int64_t)};
  const void** targets[2] = {&prepared.device_ops, &prepared.device_dims};
  for (int i = 0; i < 2; ++i) {
    if (sizes[i] == 0) continue;
    absl::StatusOr<char*> device = Allocate(static_cast<int64_t>(sizes[i]));
    if (!device.ok()) return device.status();
    table_memory_.push_back(*device);
    const cudaError_t e =
        cudaMemcpy(*device, sources[i], sizes[i], cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return CudaError(name(), "cudaMemcpy of a table", e);
    *targets[i] = *device;
  }
  return &prepared;
}

absl::Status CudaMemorySpace::RunTable(const PreparedTable& table,
                                       const CopyBuffers& buffers) {
  const cudaStream_t stream = StreamOf(stream_);
  for (const ZeroFill& fill : table.table.fills) {
    if (fill.bytes == 0) continue;
    const cudaError_t e =
        cudaMemsetAsync(WritableBuffer(fill.buffer, buffers) + fill.offset, 0,
                        static_cast<size_t>(fill.bytes), stream);
    if (e != cudaSuccess) return CudaError(name(), "cudaMemsetAsync", e);
  }
  const cudaError_t e = LaunchCopyUnits(
      static_cast<const DeviceCopyOp*>(table.device_ops),
      static_cast<int32_t>(table.table.ops.size()),
      static_cast<const int64_t*>(table.device_dims), table.table.units,
      LanesPerUnit(table.table.max_unit_bytes), buffers, stream);
  if (e != cudaSuccess) return CudaError(name(), "the copy kernel's launch", e);
  for (const PitchedCopy& copy : table.table.pitched) {
    const cudaError_t p = EnqueuePitchedCopy(copy, buffers, stream);
    if (p != cudaSuccess) return CudaError(name(), "a pitched copy", p);
  }
  return absl::OkStatus();
}

absl::Status CudaMemorySpace::Synchronize() {
  ++synchronizations_;
  const cudaError_t e = cudaStreamSynchronize(StreamOf(stream_));
  if (e != cudaSuccess) return CudaError(name(), "cudaStreamSynchronize", e);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CudaMemorySpace::Mark() {
  if (marks_used_ == events_.size()) {
    cudaEvent_t event = nullptr;
    const cudaError_t e = cudaEventCreate(&event);
    if (e != cudaSuccess) return CudaError(name(), "cudaEventCreate", e);
    events_.push_back(event);
  }
  cudaEvent_t event = events_[marks_used_];
  const cudaError_t e = cudaEventRecord(event, StreamOf(stream_));
  if (e != cudaSuccess) return CudaError(name(), "cudaEventRecord", e);
  return static_cast<int64_t>(marks_used_++);
}

absl::StatusOr<double> CudaMemorySpace::Between(int64_t from, int64_t to) {
  const int64_t n = static_cast<int64_t>(marks_used_);
  if (from < 0 || to < 0 || from >= n || to >= n) {
    return absl::OutOfRangeError(
        absl::StrCat(name(), ": marks ", from, " and ", to, " of ", n));
  }
  float ms = 0;
  const cudaError_t e = cudaEventElapsedTime(&ms, events_[from], events_[to]);
  if (e != cudaSuccess) return CudaError(name(), "cudaEventElapsedTime", e);
  return ms / 1e3;
}

absl::Status CudaMemorySpace::Upload(char* to, const char* from,
                                     int64_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  const cudaError_t e =
      cudaMemcpy(to, from, static_cast<size_t>(bytes), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return CudaError(name(), "cudaMemcpy to the device", e);
  return absl::OkStatus();
}

absl::Status CudaMemorySpace::Download(char* to, const char* from,
                                       int64_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  cudaError_t e = cudaStreamSynchronize(StreamOf(stream_));
  if (e == cudaSuccess) {
    e = cudaMemcpy(to, from, static_cast<size_t>(bytes),
                   cudaMemcpyDeviceToHost);
  }
  if (e != cudaSuccess) {
    return CudaError(name(), "cudaMemcpy from the device", e);
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
