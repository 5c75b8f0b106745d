#include "executor/run/step_exec.h"

#include "executor/run/box_copy.h"
#include "executor/run/local_step.h"

namespace reshard::executor {
namespace {

using Compiled = CompiledStep;

absl::Status RunAllGather(const Compiled& c, const char* in, char* out,
                          Wires wires) {
  const StepLayout& l = c.layout;
  char* gathered = c.direct_recv ? out : wires.out;
  char* mine = gathered + c.Bytes(l.index * c.block);
  PackBox(in, l.in_shape, l.send[0], c.itemsize, mine);
  absl::Status s = c.comm->AllGather(mine, gathered, c.block, c.dtype);
  if (!s.ok() || c.direct_recv) return s;
  for (size_t i = 0; i < l.recv.size(); ++i) {
    UnpackBox(gathered + c.Bytes(i * c.block), out, l.out_shape, l.recv[i],
              c.itemsize);
  }
  return absl::OkStatus();
}

absl::Status RunAllReduce(const Compiled& c, const char* in, char* out) {
  CopyBytes(out, in, c.Bytes(c.in_numel));
  return c.comm->AllReduce(out, c.block, c.dtype,
                           {c.step.reduce_op, c.step.avg_divisor});
}

absl::Status RunReduceScatter(const Compiled& c, const char* in, char* out,
                              Wires wires) {
  const StepLayout& l = c.layout;
  const char* send = in;
  if (!c.direct_send) {
    for (size_t j = 0; j < l.send.size(); ++j) {
      PackBox(in, l.in_shape, l.send[j], c.itemsize,
              wires.in + c.Bytes(j * c.block));
    }
    send = wires.in;
  }
  // The block is the output, row-major, followed by padding when this
  // member's part is smaller than the largest.
  char* result = c.out_numel == c.block ? out : wires.out;
  absl::Status s = c.comm->ReduceScatter(
      send, result, c.block, c.dtype, {c.step.reduce_op, c.step.avg_divisor});
  if (s.ok() && result != out) {
    CopyBytes(out, result, c.Bytes(c.out_numel));
  }
  return s;
}

// Blocks are packed on demand (or sent in place when they are the input's
// consecutive blocks); every member takes this same path, whatever its own
// layout, because the backend's exchange protocol must match.
absl::Status RunAllToAll(const Compiled& c, const char* in, char* out,
                         Wires wires) {
  const StepLayout& l = c.layout;
  auto pack = [&](int j) -> const void* {
    if (c.direct_send) return in + c.Bytes(j * c.block);
    char* block = wires.in + c.Bytes(j * c.block);
    PackBox(in, l.in_shape, l.send[j], c.itemsize, block);
    return block;
  };
  char* received = c.direct_recv ? out : wires.out;
  absl::Status s =
      c.comm->AllToAllPacking(pack, wires.in, received, c.block, c.dtype);
  if (!s.ok() || c.direct_recv) return s;
  for (size_t i = 0; i < l.recv.size(); ++i) {
    UnpackBox(received + c.Bytes(i * c.block), out, l.out_shape, l.recv[i],
              c.itemsize);
  }
  return absl::OkStatus();
}

}  // namespace

CompiledStep CompileStep(const Mesh& mesh, const TensorSpec& tensor,
                         const Step& step, int64_t position) {
  Compiled c;
  c.step = step;
  c.layout = MakeStepLayout(mesh, tensor.shape(), c.step, position);
  c.skip = c.layout.group_size == 1;
  c.dtype = tensor.dtype();
  c.itemsize = tensor.itemsize();
  c.in_numel = Numel(c.layout.in_shape);
  c.out_numel = Numel(c.layout.out_shape);
  c.block = IsCollective(c.step.op) ? c.layout.BlockNumel() : 0;
  if (!c.skip && IsCollective(c.step.op)) {
    const DirectPaths direct = ChooseDirectPaths(c.step.op, c.layout);
    c.direct_send = direct.send;
    c.direct_recv = direct.recv;
  }
  return c;
}

WireUse WireOf(const Compiled& c) {
  return StepWire(c.step.op, c.layout, {c.direct_send, c.direct_recv},
                  c.itemsize);
}

int64_t StepBytes(const Compiled& c) {
  return StepBytesWith(c.step.op, c.layout, c.itemsize,
                       {c.direct_send, c.direct_recv});
}

absl::Status ExecuteStep(const CompiledStep& c, const char* in, char* out,
                         Wires wires) {
  // Every member of a group agrees on the block: when it is empty every
  // member's input and output are too, and nothing moves.
  if (IsCollective(c.step.op) && c.block == 0) return absl::OkStatus();
  switch (c.step.op) {
    case StepOp::kAllGather:
      return RunAllGather(c, in, out, wires);
    case StepOp::kAllReduce:
      return RunAllReduce(c, in, out);
    case StepOp::kReduceScatter:
      return RunReduceScatter(c, in, out, wires);
    case StepOp::kAllToAll:
      return RunAllToAll(c, in, out, wires);
    default:
      RunLocalStep(c.layout, c.itemsize, in, out);
      return absl::OkStatus();
  }
}

absl::Status CallCollective(Communicator& comm, StepOp op, const char* send,
                            char* recv, int64_t block_numel, DType dtype,
                            Reduction reduction) {
  switch (op) {
    case StepOp::kAllGather:
      return comm.AllGather(send, recv, block_numel, dtype);
    case StepOp::kAllReduce:
      return comm.AllReduce(recv, block_numel, dtype, reduction);
    case StepOp::kReduceScatter:
      return comm.ReduceScatter(send, recv, block_numel, dtype, reduction);
    default:
      return comm.AllToAll(send, recv, block_numel, dtype);
  }
}

}  // namespace reshard::executor
