#include "executor/run/copy_program.h"

#include <cstring>

#include "executor/run/box_copy.h"

namespace reshard::executor {
namespace {

using Buffer = CopyBuffer;

// `box` in a row-major tensor of `shape`, in elements: where it starts,
// its contiguous run (box_copy.h's RowsOf, as PackBox walks it) and the
// loops over its other dims, with the tensor's strides and the packed
// form's. Loops of one iteration are dropped.
struct BoxWalk {
  int64_t offset = 0;
  int64_t run = 1;
  std::vector<int64_t> counts, tensor_strides, packed_strides;
};

BoxWalk WalkOf(absl::Span<const int64_t> shape, const Box& box) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> stride(rank, 1), packed(rank, 1);
  for (int d = rank - 2; d >= 0; --d) {
    stride[d] = stride[d + 1] * shape[d + 1];
    packed[d] = packed[d + 1] * box.extent[d + 1];
  }
  BoxWalk walk;
  if (box.numel() == 0) {
    walk.run = 0;
    return walk;
  }
  const RowWalk rows = RowsOf(shape, box);
  walk.run = rows.run;
  for (int d = 0; d < rank; ++d) walk.offset += box.offset[d] * stride[d];
  for (int d = 0; d < rows.inner; ++d) {
    if (box.extent[d] == 1) continue;
    walk.counts.push_back(box.extent[d]);
    walk.tensor_strides.push_back(stride[d]);
    walk.packed_strides.push_back(packed[d]);
  }
  return walk;
}

std::vector<int64_t> Bytes(std::vector<int64_t> elements, int64_t itemsize) {
  for (int64_t& e : elements) e *= itemsize;
  return elements;
}

// A local step: zeros unless one box covers the output, then that box.
CopyProgram LocalCopies(const StepLayout& l, int64_t itemsize) {
  int64_t out_numel = 1;
  for (int64_t e : l.out_shape) out_numel *= e;
  CopyProgram program;
  const bool covers = !l.recv.empty() && l.recv[0].numel() == out_numel;
  if (!covers) program.fills.push_back({Buffer::kOut, 0, out_numel * itemsize});
  if (l.send.empty()) return program;
  program.copies.push_back(covers ? PackCopy(l.in_shape, l.send[0], itemsize,
                                             Buffer::kIn, Buffer::kOut, 0)
                                  : UnpackCopy(l.out_shape, l.recv[0], itemsize,
                                               Buffer::kIn, 0, Buffer::kOut));
  return program;
}

// Every send box packed into its block of `to` (block j at j blocks).
void PackSends(const CompiledStep& c, Buffer to, CopyProgram& program) {
  const StepLayout& l = c.layout;
  for (size_t j = 0; j < l.send.size(); ++j) {
    program.copies.push_back(
        PackCopy(l.in_shape, l.send[j], c.itemsize, Buffer::kIn, to,
                 c.Bytes(static_cast<int64_t>(j) * c.block)));
  }
}

// Every receive box unpacked from its block of `from` into the output.
void UnpackRecvs(const CompiledStep& c, Buffer from, CopyProgram& program) {
  const StepLayout& l = c.layout;
  for (size_t i = 0; i < l.recv.size(); ++i) {
    program.copies.push_back(
        UnpackCopy(l.out_shape, l.recv[i], c.itemsize, from,
                   c.Bytes(static_cast<int64_t>(i) * c.block), Buffer::kOut));
  }
}

void RunCopy(const StridedCopy& copy, const CopyBuffers& buffers) {
  if (copy.run_bytes == 0) return;
  const char* from = ReadableBuffer(copy.from, buffers) + copy.from_offset;
  char* to = WritableBuffer(copy.to, buffers) + copy.to_offset;
  const size_t loops = copy.counts.size();
  std::vector<int64_t> index(loops, 0);
  while (true) {
    int64_t src = 0, dst = 0;
    for (size_t d = 0; d < loops; ++d) {
      src += index[d] * copy.from_strides[d];
      dst += index[d] * copy.to_strides[d];
    }
    std::memcpy(to + dst, from + src, static_cast<size_t>(copy.run_bytes));
    size_t d = loops;
    while (d > 0 && ++index[d - 1] == copy.counts[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

}  // namespace

StridedCopy ContiguousCopy(CopyBuffer from, int64_t from_offset, CopyBuffer to,
                           int64_t to_offset, int64_t bytes) {
  StridedCopy copy;
  copy.from = from;
  copy.to = to;
  copy.from_offset = from_offset;
  copy.to_offset = to_offset;
  copy.run_bytes = bytes;
  return copy;
}

StridedCopy PackCopy(absl::Span<const int64_t> shape, const Box& box,
                     int64_t itemsize, CopyBuffer tensor, CopyBuffer packed,
                     int64_t packed_offset) {
  const BoxWalk walk = WalkOf(shape, box);
  StridedCopy copy;
  copy.from = tensor;
  copy.to = packed;
  copy.from_offset = walk.offset * itemsize;
  copy.to_offset = packed_offset;
  copy.run_bytes = walk.run * itemsize;
  copy.counts = walk.counts;
  copy.from_strides = Bytes(walk.tensor_strides, itemsize);
  copy.to_strides = Bytes(walk.packed_strides, itemsize);
  return copy;
}

StridedCopy UnpackCopy(absl::Span<const int64_t> shape, const Box& box,
                       int64_t itemsize, CopyBuffer packed,
                       int64_t packed_offset, CopyBuffer tensor) {
  StridedCopy copy = PackCopy(shape, box, itemsize, tensor, packed, 0);
  std::swap(copy.from, copy.to);
  copy.to_offset = copy.from_offset;
  copy.from_offset = packed_offset;
  std::swap(copy.from_strides, copy.to_strides);
  return copy;
}

StepCopies CopiesOf(const CompiledStep& c) {
  StepCopies s;
  if (c.skip || (IsCollective(c.step.op) && c.block == 0)) return s;
  s.collective = IsCollective(c.step.op);
  const int64_t index_offset = c.Bytes(c.layout.index * c.block);
  switch (c.step.op) {
    case StepOp::kAllGather: {
      const Buffer gathered = c.direct_recv ? Buffer::kOut : Buffer::kWireOut;
      s.before.copies.push_back(PackCopy(c.layout.in_shape, c.layout.send[0],
                                         c.itemsize, Buffer::kIn, gathered,
                                         index_offset));
      s.io = {gathered, index_offset, gathered};
      if (!c.direct_recv) UnpackRecvs(c, Buffer::kWireOut, s.after);
      break;
    }
    case StepOp::kAllReduce:
      s.before.copies.push_back(
          ContiguousCopy(Buffer::kIn, 0, Buffer::kOut, 0, c.Bytes(c.in_numel)));
      s.io = {Buffer::kOut, 0, Buffer::kOut};
      break;
    case StepOp::kReduceScatter:
      if (!c.direct_send) PackSends(c, Buffer::kWireIn, s.before);
      s.io.send = c.direct_send ? Buffer::kIn : Buffer::kWireIn;
      s.io.recv = c.out_numel == c.block ? Buffer::kOut : Buffer::kWireOut;
      if (s.io.recv == Buffer::kWireOut) {
        s.after.copies.push_back(ContiguousCopy(
            Buffer::kWireOut, 0, Buffer::kOut, 0, c.Bytes(c.out_numel)));
      }
      break;
    case StepOp::kAllToAll:
      if (!c.direct_send) PackSends(c, Buffer::kWireIn, s.before);
      s.io.send = c.direct_send ? Buffer::kIn : Buffer::kWireIn;
      s.io.recv = c.direct_recv ? Buffer::kOut : Buffer::kWireOut;
      if (!c.direct_recv) UnpackRecvs(c, Buffer::kWireOut, s.after);
      break;
    default:
      s.before = LocalCopies(c.layout, c.itemsize);
      break;
  }
  return s;
}

void RunOnHost(const CopyProgram& program, const CopyBuffers& buffers) {
  for (const ZeroFill& fill : program.fills) {
    if (fill.bytes > 0) {
      std::memset(WritableBuffer(fill.buffer, buffers) + fill.offset, 0,
                  static_cast<size_t>(fill.bytes));
    }
  }
  for (const StridedCopy& copy : program.copies) RunCopy(copy, buffers);
}

}  // namespace reshard::executor
