// The device side of a copy program (executor/memory/device_copy_table.h): one
// launch runs every unit of a table whose ops and loops are already in
// device memory, on the caller's stream, after the table's fills (which
// the caller enqueues with cudaMemsetAsync). Only CUDA types here: the
// kernel's translation unit is compiled by nvcc without absl.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_COPY_KERNEL_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_COPY_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "executor/memory/device_copy_unit.h"
#include "executor/run/copy_buffers.h"

namespace reshard::executor {

// Enqueues units [0, units) of `ops` (`op_count` of them) and `dims`, all
// device pointers, on `stream`, `lanes` threads per unit (LanesPerUnit of
// the table's longest unit). Returns the launch's error.
cudaError_t LaunchCopyUnits(const DeviceCopyOp* ops, int32_t op_count,
                            const int64_t* dims, int64_t units, int lanes,
                            const CopyBuffers& buffers, cudaStream_t stream);

// Enqueues `copy` on `stream` as one cudaMemcpy2DAsync (depth 1) or
// cudaMemcpy3DAsync, device to device. Returns the call's error.
cudaError_t EnqueuePitchedCopy(const PitchedCopy& copy,
                               const CopyBuffers& buffers, cudaStream_t stream);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_COPY_KERNEL_H_
