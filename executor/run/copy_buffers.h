// The four buffers that a step's copies run on (its input and output, the
// packed wire buffers), and the one mapping from a CopyBuffer to its pointer.
// Host copies, the host interpreter of device tables and the CUDA kernel all
// use it. Plain C++ (nvcc compiles it without absl).
#ifndef RESHARD_EXECUTOR_RUN_COPY_BUFFERS_H_
#define RESHARD_EXECUTOR_RUN_COPY_BUFFERS_H_

#include <cstdint>

#include "executor/memory/host_device.h"

namespace reshard::executor {

// 32 bits: device copy descriptors hold it in fixed-size fields.
enum class CopyBuffer : int32_t { kIn, kOut, kWireIn, kWireOut };
static_assert(sizeof(CopyBuffer) == 4);

// The pointers of one run of a program: host pointers on the host, device
// pointers in the kernel.
struct CopyBuffers {
  const char* in = nullptr;
  char* out = nullptr;
  char* wire_in = nullptr;
  char* wire_out = nullptr;
};

// The buffer `b` names as a target: null for the input, which is never
// written.
RESHARD_HOST_DEVICE inline char* WritableBuffer(CopyBuffer b,
                                                const CopyBuffers& buffers) {
  switch (b) {
    case CopyBuffer::kOut:
      return buffers.out;
    case CopyBuffer::kWireIn:
      return buffers.wire_in;
    case CopyBuffer::kWireOut:
      return buffers.wire_out;
    default:
      return nullptr;
  }
}

RESHARD_HOST_DEVICE inline const char* ReadableBuffer(
    CopyBuffer b, const CopyBuffers& buffers) {
  return b == CopyBuffer::kIn ? buffers.in : WritableBuffer(b, buffers);
}

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_COPY_BUFFERS_H_
