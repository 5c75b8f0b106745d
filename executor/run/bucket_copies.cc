#include "executor/run/bucket_copies.h"

#include <vector>

namespace reshard::executor {
namespace {}  // namespace

CopyBuffer BucketResult(StepOp op) {
  return op == StepOp::kAllReduce ? CopyBuffer::kWireIn : CopyBuffer::kWireOut;
}

CopyProgram BucketPackProgram(const BucketLayout& layout, StepOp op, size_t k) {
  const StepLayout& l = layout.members[k];
  const int64_t s = layout.itemsizes[k];
  const int64_t at = layout.offsets[k];
  CopyProgram program;
  switch (op) {
    case StepOp::kAllGather:
      program.copies.push_back(PackCopy(
          l.in_shape, l.send[0], s, CopyBuffer::kIn, CopyBuffer::kWireIn, at));
      break;
    case StepOp::kAllReduce:
      program.copies.push_back(ContiguousCopy(
          CopyBuffer::kIn, 0, CopyBuffer::kWireIn, at, Numel(l.in_shape) * s));
      break;
    default:  // reduce_scatter, all_to_all: block j goes to member j
      for (size_t j = 0; j < l.send.size(); ++j) {
        program.copies.push_back(PackCopy(
            l.in_shape, l.send[j], s, CopyBuffer::kIn, CopyBuffer::kWireIn,
            at + static_cast<int64_t>(j) * layout.block_bytes));
      }
      break;
  }
  return program;
}

CopyProgram BucketUnpackProgram(const BucketLayout& layout, StepOp op,
                                size_t k) {
  const StepLayout& l = layout.members[k];
  const int64_t s = layout.itemsizes[k];
  const int64_t at = layout.offsets[k];
  const CopyBuffer result = BucketResult(op);
  CopyProgram program;
  switch (op) {
    case StepOp::kAllReduce:
    case StepOp::kReduceScatter:  // this member's part, row-major
      program.copies.push_back(ContiguousCopy(result, at, CopyBuffer::kOut, 0,
                                              Numel(l.out_shape) * s));
      break;
    default:  // all_gather, all_to_all: block i comes from member i
      for (size_t i = 0; i < l.recv.size(); ++i) {
        program.copies.push_back(
            UnpackCopy(l.out_shape, l.recv[i], s, result,
                       at + static_cast<int64_t>(i) * layout.block_bytes,
                       CopyBuffer::kOut));
      }
      break;
  }
  return program;
}

}  // namespace reshard::executor
