#include "executor/step_exec.h"

#include "executor/box_copy.h"
#include "executor/local_step.h"

namespace reshard::executor {
namespace {

using Compiled = CompiledStep;

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// True when box j of `boxes` is the j-th run of `block` elements of a
// tensor of `shape`.
bool ConsecutiveBlocks(const std::vector<Box>& boxes,
                       const std::vector<int64_t>& shape, int64_t block) {
  for (size_t j = 0; j < boxes.size(); ++j) {
    if (boxes[j].numel() != block) return false;
    const std::optional<int64_t> at = ContiguousOffset(shape, boxes[j]);
    if (!at.has_value() || *at != static_cast<int64_t>(j) * block) {
      return false;
    }
  }
  return true;
}

void ChooseFastPaths(Compiled& c) {
  const StepLayout& l = c.layout;
  switch (c.step.op) {
    case StepOp::kAllGather:
      c.direct_recv = ConsecutiveBlocks(l.recv, l.out_shape, c.block);
      break;
    case StepOp::kReduceScatter:
      c.direct_send = ConsecutiveBlocks(l.send, l.in_shape, c.block);
      break;
    case StepOp::kAllToAll:
      c.direct_send = ConsecutiveBlocks(l.send, l.in_shape, c.block);
      c.direct_recv = ConsecutiveBlocks(l.recv, l.out_shape, c.block);
      break;
    default:
      break;
  }
}

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
  if (!c.skip && IsCollective(c.step.op)) ChooseFastPaths(c);
  return c;
}

WireUse WireOf(const Compiled& c) {
  const int64_t n = c.layout.group_size;
  WireUse use;
  switch (c.step.op) {
    case StepOp::kAllGather:
      if (!c.direct_recv) use.out = c.Bytes(n * c.block);
      break;
    case StepOp::kReduceScatter:
      if (!c.direct_send) use.in = c.Bytes(n * c.block);
      if (c.out_numel != c.block) use.out = c.Bytes(c.block);
      break;
    case StepOp::kAllToAll:
      if (!c.direct_send) use.in = c.Bytes(n * c.block);
      if (!c.direct_recv) use.out = c.Bytes(n * c.block);
      break;
    default:
      break;
  }
  return use;
}

int64_t StepBytes(const Compiled& c) {
  const WireUse wire = WireOf(c);
  return c.Bytes(c.in_numel) + c.Bytes(c.out_numel) + wire.in + wire.out;
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

}  // namespace reshard::executor
