#include "executor/backends/nccl/copy_kernel.h"

namespace reshard::executor {
namespace {

// A unit's `lanes` threads (this one is `lane`) copy `bytes` in words of
// T (both ends aligned to T and `bytes` a multiple of it).
// A unit is at most kDeviceChunkBytes: 32-bit indices suffice.
template <typename T>
__device__ void CopyWords(const char* from, char* to, int64_t bytes, int lane,
                          int lanes) {
  const T* src = reinterpret_cast<const T*>(from);
  T* dst = reinterpret_cast<T*>(to);
  const int words = static_cast<int>(bytes) / static_cast<int>(sizeof(T));
  for (int k = lane; k < words; k += lanes) dst[k] = src[k];
}

// The widest word both ends and the length allow: 16 bytes on the rows
// of a typical tensor, down to single bytes on odd ones.
__device__ void CopyUnit(const char* from, char* to, int64_t bytes, int lane,
                         int lanes) {
  const uint64_t align = reinterpret_cast<uint64_t>(from) |
                         reinterpret_cast<uint64_t>(to) |
                         static_cast<uint64_t>(bytes);
  if (align % 16 == 0) {
    CopyWords<uint4>(from, to, bytes, lane, lanes);
  } else if (align % 8 == 0) {
    CopyWords<uint64_t>(from, to, bytes, lane, lanes);
  } else if (align % 4 == 0) {
    CopyWords<uint32_t>(from, to, bytes, lane, lanes);
  } else {
    CopyWords<char>(from, to, bytes, lane, lanes);
  }
}

// Each block holds kDeviceCopyThreads / lanes groups of `lanes` threads
// (a power of two: shifts and masks, no division); a group copies one
// unit at a time, striding over the grid's groups.
__global__ void CopyUnitsKernel(const DeviceCopyOp* ops, int32_t op_count,
                                const int64_t* dims, int64_t units, int lanes,
                                CopyBuffers buffers) {
  const int shift = __ffs(lanes) - 1;
  const int64_t groups = kDeviceCopyThreads >> shift;
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * groups + (threadIdx.x >> shift);
  for (int64_t u = first; u < units; u += gridDim.x * groups) {
    const UnitCopy c = LocateUnit(ops, op_count, dims, u);
    CopyUnit(ReadableBuffer(c.from, buffers) + c.from_at,
             WritableBuffer(c.to, buffers) + c.to_at, c.bytes, lane, lanes);
  }
}

}  // namespace

cudaError_t LaunchCopyUnits(const DeviceCopyOp* ops, int32_t op_count,
                            const int64_t* dims, int64_t units, int lanes,
                            const CopyBuffers& buffers, cudaStream_t stream) {
  if (units <= 0) return cudaSuccess;
  constexpr int64_t kMaxBlocks = 8192;  // grid-stride beyond this
  const int64_t groups = kDeviceCopyThreads / lanes;
  const int64_t needed = (units + groups - 1) / groups;
  const int64_t blocks = needed < kMaxBlocks ? needed : kMaxBlocks;
  CopyUnitsKernel<<<static_cast<unsigned>(blocks), kDeviceCopyThreads, 0,
                    stream>>>(ops, op_count, dims, units, lanes, buffers);
  return cudaGetLastError();
}

cudaError_t EnqueuePitchedCopy(const PitchedCopy& copy,
                               const CopyBuffers& buffers,
                               cudaStream_t stream) {
  const char* from = ReadableBuffer(copy.from, buffers) + copy.from_offset;
  char* to = WritableBuffer(copy.to, buffers) + copy.to_offset;
  if (copy.depth == 1) {
    return cudaMemcpy2DAsync(to, copy.to_pitch, from, copy.from_pitch,
                             copy.width, copy.height, cudaMemcpyDeviceToDevice,
                             stream);
  }
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(const_cast<char*>(from), copy.from_pitch,
                                 copy.width, copy.from_slice_rows);
  p.dstPtr =
      make_cudaPitchedPtr(to, copy.to_pitch, copy.width, copy.to_slice_rows);
  p.extent = make_cudaExtent(copy.width, copy.height, copy.depth);
  p.kind = cudaMemcpyDeviceToDevice;
  return cudaMemcpy3DAsync(&p, stream);
}

}  // namespace reshard::executor
