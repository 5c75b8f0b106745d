#include "executor/nccl/copy_kernel.h"

namespace reshard::executor {
namespace {

__device__ const char* Source(const DeviceCopyBuffers& b, int32_t which) {
  switch (which) {
    case 0:
      return b.in;
    case 1:
      return b.out;
    case 2:
      return b.wire_in;
    default:
      return b.wire_out;
  }
}

__device__ char* Target(const DeviceCopyBuffers& b, int32_t which) {
  return const_cast<char*>(Source(b, which));
}

// The block's threads copy `bytes` in words of T (both ends aligned to T
// and `bytes` a multiple of it).
template <typename T>
__device__ void CopyWords(const char* from, char* to, int64_t bytes) {
  const T* src = reinterpret_cast<const T*>(from);
  T* dst = reinterpret_cast<T*>(to);
  const int64_t words = bytes / static_cast<int64_t>(sizeof(T));
  for (int64_t k = threadIdx.x; k < words; k += blockDim.x) dst[k] = src[k];
}

// The widest word both ends and the length allow: 16 bytes on the rows
// of a typical tensor, down to single bytes on odd ones.
__device__ void CopyUnit(const char* from, char* to, int64_t bytes) {
  const uint64_t align = reinterpret_cast<uint64_t>(from) |
                         reinterpret_cast<uint64_t>(to) |
                         static_cast<uint64_t>(bytes);
  if (align % 16 == 0) {
    CopyWords<uint4>(from, to, bytes);
  } else if (align % 8 == 0) {
    CopyWords<uint64_t>(from, to, bytes);
  } else if (align % 4 == 0) {
    CopyWords<uint32_t>(from, to, bytes);
  } else {
    CopyWords<char>(from, to, bytes);
  }
}

__global__ void CopyUnitsKernel(const DeviceCopyOp* ops, int32_t op_count,
                                const int64_t* dims, int64_t units,
                                DeviceCopyBuffers buffers) {
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const UnitCopy c = LocateUnit(ops, op_count, dims, u);
    CopyUnit(Source(buffers, c.from) + c.from_at,
             Target(buffers, c.to) + c.to_at, c.bytes);
  }
}

}  // namespace

cudaError_t LaunchCopyUnits(const DeviceCopyOp* ops, int32_t op_count,
                            const int64_t* dims, int64_t units,
                            const DeviceCopyBuffers& buffers,
                            cudaStream_t stream) {
  if (units <= 0) return cudaSuccess;
  constexpr int kThreads = 256;      // 4 KiB units: one uint4 per thread
  constexpr int64_t kMaxBlocks = 8192;  // grid-stride beyond this
  const int64_t blocks = units < kMaxBlocks ? units : kMaxBlocks;
  CopyUnitsKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      ops, op_count, dims, units, buffers);
  return cudaGetLastError();
}

}  // namespace reshard::executor
