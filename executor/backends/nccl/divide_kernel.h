// The avg division of the NCCL backend (docs/DESIGN.md §6.1): after an ncclSum,
// every element is divided by the divisor on the communicator's stream, by
// IEEE division (never a multiplication by the reciprocal) exactly as the
// host's DivideElements does: floats and doubles by correctly rounded
// division, bfloat16 and float16 widened to float, divided and rounded to
// nearest even, integers by C++ integer division. Only CUDA types here: the
// kernel's translation unit is compiled by nvcc without absl.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_DIVIDE_KERNEL_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_DIVIDE_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reshard::executor {

// The element types of docs/DESIGN.md §4, as the kernel sees them.
enum class DivideType : int {
  kFloat32,
  kFloat64,
  kBFloat16,
  kFloat16,
  kInt32,
  kInt64
};

// Enqueues data[k] = data[k] / divisor for k < count on `stream` (device
// memory). Returns the launch's error; the division itself cannot fail.
cudaError_t LaunchDivide(DivideType type, void* data, int64_t count,
                         int64_t divisor, cudaStream_t stream);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_DIVIDE_KERNEL_H_
