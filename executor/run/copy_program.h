// The data movement of one compiled step on one rank, as descriptors a GPU
// runs without the host: strided copies between byte ranges of four buffers
// (the step's input and output, the packed wire buffers) and zero fills, in two
// phases around the step's collective. A box of a row-major tensor becomes one
// strided copy: its trailing dims that the box covers fully merge into one
// contiguous run, the other dims are loops with a byte stride on each side (a
// copy with at most two loops is what cudaMemcpy2DAsync/3DAsync take; more need
// a kernel). Pure: computed and run on host memory here, where tests hold it to
// ExecuteStep's host path byte for byte.
#ifndef RESHARD_EXECUTOR_RUN_COPY_PROGRAM_H_
#define RESHARD_EXECUTOR_RUN_COPY_PROGRAM_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "executor/run/copy_buffers.h"
#include "executor/run/step_exec.h"
#include "planner/core/local_layout.h"

namespace reshard::executor {

// `loops` outer dims (outermost first) of `run_bytes` contiguous bytes.
struct StridedCopy {
  CopyBuffer from = CopyBuffer::kIn;
  CopyBuffer to = CopyBuffer::kOut;
  int64_t from_offset = 0;  // bytes
  int64_t to_offset = 0;    // bytes
  int64_t run_bytes = 0;
  std::vector<int64_t> counts;        // per loop
  std::vector<int64_t> from_strides;  // bytes, per loop
  std::vector<int64_t> to_strides;    // bytes, per loop
};

struct ZeroFill {
  CopyBuffer buffer = CopyBuffer::kOut;
  int64_t offset = 0;  // bytes
  int64_t bytes = 0;
};

// Fills first, then copies, in order.
struct CopyProgram {
  std::vector<ZeroFill> fills;
  std::vector<StridedCopy> copies;
};

// Where the step's collective reads and writes: `send` (at `send_offset`
// bytes) and `recv`, whole blocks as the Communicator call takes them
// (all_reduce: the same buffer, in place).
struct CollectiveIo {
  CopyBuffer send = CopyBuffer::kIn;
  int64_t send_offset = 0;
  CopyBuffer recv = CopyBuffer::kOut;
};

// What a step moves before its collective (packing), where the collective
// runs, and what it moves after (unpacking). A local step has only
// `before`; a collective whose block is empty moves nothing on any member
// and is not called (`collective` false), as ExecuteStep does.
struct StepCopies {
  CopyProgram before;
  bool collective = false;
  CollectiveIo io;
  CopyProgram after;
};

// `bytes` contiguous bytes, from byte `from_offset` of one buffer to byte
// `to_offset` of another (no loops).
StridedCopy ContiguousCopy(CopyBuffer from, int64_t from_offset, CopyBuffer to,
                           int64_t to_offset, int64_t bytes);

// `box` of a row-major tensor of `shape` to its packed (row-major,
// box-shaped) form, and back: the tensor's buffer and byte offset on one
// side, the packed run's on the other.
StridedCopy PackCopy(absl::Span<const int64_t> shape, const Box& box,
                     int64_t itemsize, CopyBuffer tensor, CopyBuffer packed,
                     int64_t packed_offset);
StridedCopy UnpackCopy(absl::Span<const int64_t> shape, const Box& box,
                       int64_t itemsize, CopyBuffer packed,
                       int64_t packed_offset, CopyBuffer tensor);

// The copies of `c` as ExecuteStep does them on host memory, fast paths
// (direct_send, direct_recv) included; nothing for a skipped step.
StepCopies CopiesOf(const CompiledStep& c);

// Runs `program` on host memory.
void RunOnHost(const CopyProgram& program, const CopyBuffers& buffers);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_COPY_PROGRAM_H_
