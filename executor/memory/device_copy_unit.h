// The unit of a device copy: one chunk (at most kDeviceChunkBytes) of one
// contiguous run of one strided copy. The kernel gives each unit to a
// group of a thread block's threads (LanesPerUnit: a whole block for
// 4 KiB units, a few threads for short rows, so that a block of 64-byte
// rows keeps every thread busy); the host interpreter runs the same units
// one by one. Both
// find what a unit copies through LocateUnit below, compiled by nvcc for
// the device and by the host compiler here, so every machine tests the
// decomposition the GPU runs. Plain C++ and CUDA types only (nvcc compiles
// it without absl).
#ifndef RESHARD_EXECUTOR_MEMORY_DEVICE_COPY_UNIT_H_
#define RESHARD_EXECUTOR_MEMORY_DEVICE_COPY_UNIT_H_

#include <cstdint>

#include "executor/memory/host_device.h"
#include "executor/run/copy_buffers.h"

namespace reshard::executor {

// The most bytes one unit copies: long runs are split so that a few long
// rows still spread over many blocks.
inline constexpr int64_t kDeviceChunkBytes = 4096;
// Threads of one block of the copy kernel: a 4 KiB unit is one 16-byte
// word per thread.
inline constexpr int kDeviceCopyThreads = 256;

// The threads that copy one unit when a table's longest unit is
// `max_unit_bytes`: one per 16-byte word, as a power of two from 1 to
// kDeviceCopyThreads (which it divides).
RESHARD_HOST_DEVICE inline int LanesPerUnit(int64_t max_unit_bytes) {
  int lanes = 1;
  while (lanes < kDeviceCopyThreads && lanes * int64_t{16} < max_unit_bytes) {
    lanes *= 2;
  }
  return lanes;
}

// One strided copy as the device reads it (fixed-size, 8-byte fields).
// Its loops live in the table's `dims`: `loops` counts (outermost first),
// then as many source strides, then as many destination strides (bytes).
struct DeviceCopyOp {
  CopyBuffer from = CopyBuffer::kIn;
  CopyBuffer to = CopyBuffer::kOut;
  int32_t loops = 0;
  int32_t dims_at = 0;
  int64_t from_offset = 0;  // bytes
  int64_t to_offset = 0;    // bytes
  int64_t run_bytes = 0;
  int64_t chunks_per_run = 0;
  int64_t first_unit = 0;  // units of the ops before this one
};
// Uploaded byte for byte: the host's layout is the kernel's.
static_assert(sizeof(DeviceCopyOp) == 56);

// What one unit copies: `bytes` from byte `from_at` of buffer `from` to
// byte `to_at` of buffer `to`.
struct UnitCopy {
  CopyBuffer from = CopyBuffer::kIn;
  CopyBuffer to = CopyBuffer::kOut;
  int64_t from_at = 0;
  int64_t to_at = 0;
  int64_t bytes = 0;
};

// Unit `unit` of the table `ops` (ascending first_unit) and `dims`.
RESHARD_HOST_DEVICE inline UnitCopy LocateUnit(const DeviceCopyOp* ops,
                                               int32_t op_count,
                                               const int64_t* dims,
                                               int64_t unit) {
  int32_t lo = 0, hi = op_count - 1;  // the last op starting at or before
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo + 1) / 2;
    if (ops[mid].first_unit <= unit) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const DeviceCopyOp& op = ops[lo];
  const int64_t local = unit - op.first_unit;
  int64_t run = local / op.chunks_per_run;
  const int64_t chunk = local % op.chunks_per_run;
  UnitCopy out{op.from, op.to, op.from_offset, op.to_offset, 0};
  const int64_t* counts = dims + op.dims_at;
  for (int32_t k = op.loops - 1; k >= 0; --k) {  // innermost loop first
    const int64_t index = run % counts[k];
    run /= counts[k];
    out.from_at += index * counts[op.loops + k];
    out.to_at += index * counts[2 * op.loops + k];
  }
  out.from_at += chunk * kDeviceChunkBytes;
  out.to_at += chunk * kDeviceChunkBytes;
  const int64_t left = op.run_bytes - chunk * kDeviceChunkBytes;
  out.bytes = left < kDeviceChunkBytes ? left : kDeviceChunkBytes;
  return out;
}

// A strided copy that CUDA's pitched copies do in one call instead of the
// kernel (executor/memory/pitched_copy.h): `depth` slices of `height` rows of
// `width` bytes, row y of slice z at (z * slice_rows + y) * pitch bytes
// past each side's offset (cudaPitchedPtr's pitch and ysize). Depth 1 is
// a cudaMemcpy2DAsync, more a cudaMemcpy3DAsync.
struct PitchedCopy {
  CopyBuffer from = CopyBuffer::kIn;
  CopyBuffer to = CopyBuffer::kOut;
  int64_t from_offset = 0;
  int64_t to_offset = 0;
  int64_t width = 0;
  int64_t height = 1;
  int64_t depth = 1;
  int64_t from_pitch = 0;       // at least width
  int64_t to_pitch = 0;         // at least width
  int64_t from_slice_rows = 1;  // at least height
  int64_t to_slice_rows = 1;    // at least height
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_MEMORY_DEVICE_COPY_UNIT_H_
