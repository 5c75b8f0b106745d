#include "planner/core/step_memory.h"

#include <optional>
#include <vector>

#include "planner/core/box_runs.h"

namespace reshard {
namespace {

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

int64_t TensorBytes(const StepLayout& layout, int64_t itemsize) {
  return (Numel(layout.in_shape) + Numel(layout.out_shape)) * itemsize;
}

}  // namespace

DirectPaths ChooseDirectPaths(StepOp op, const StepLayout& l) {
  const int64_t block = l.BlockNumel();
  DirectPaths direct;
  switch (op) {
    case StepOp::kAllGather:
      direct.recv = ConsecutiveBlocks(l.recv, l.out_shape, block);
      break;
    case StepOp::kReduceScatter:
      direct.send = ConsecutiveBlocks(l.send, l.in_shape, block);
      break;
    case StepOp::kAllToAll:
      direct.send = ConsecutiveBlocks(l.send, l.in_shape, block);
      direct.recv = ConsecutiveBlocks(l.recv, l.out_shape, block);
      break;
    default:
      break;
  }
  return direct;
}

WireUse CollectiveWire(StepOp op, int64_t group_size, int64_t block,
                       DirectPaths direct, bool padded_part) {
  const int64_t blocks = group_size * block;
  WireUse use;
  switch (op) {
    case StepOp::kAllGather:
      if (!direct.recv) use.out = blocks;
      break;
    case StepOp::kReduceScatter:
      if (!direct.send) use.in = blocks;
      if (padded_part) use.out = block;
      break;
    case StepOp::kAllToAll:
      if (!direct.send) use.in = blocks;
      if (!direct.recv) use.out = blocks;
      break;
    default:
      break;
  }
  return use;
}

WireUse StepWireOf(StepOp op, int64_t group_size, int64_t block_numel,
                   int64_t out_numel, DirectPaths direct, int64_t itemsize) {
  return CollectiveWire(op, group_size, block_numel * itemsize, direct,
                        out_numel != block_numel);
}

WireUse StepWire(StepOp op, const StepLayout& l, DirectPaths direct,
                 int64_t itemsize) {
  return StepWireOf(op, l.group_size, l.BlockNumel(), Numel(l.out_shape),
                    direct, itemsize);
}

int64_t StepBytesWith(StepOp op, const StepLayout& layout, int64_t itemsize,
                      DirectPaths direct) {
  const WireUse wire = StepWire(op, layout, direct, itemsize);
  return TensorBytes(layout, itemsize) + wire.in + wire.out;
}

int64_t StepLiveBytes(StepOp op, const StepLayout& layout, int64_t itemsize) {
  if (layout.group_size == 1) return 0;
  return StepBytesWith(op, layout, itemsize, ChooseDirectPaths(op, layout));
}

WireUse PackedWire(StepOp op, int64_t group_size, int64_t block) {
  const WireBlocks blocks = CollectiveWireBlocks(op, group_size);
  WireUse use;
  use.in = blocks.in * block;
  if (op != StepOp::kAllReduce) use.out = blocks.out * block;
  return use;
}

WireUse BucketWire(StepOp op, const BucketLayout& layout) {
  return PackedWire(op, layout.group_size, layout.block_bytes);
}

int64_t BucketLiveBytes(StepOp op, const BucketLayout& layout) {
  const WireUse wire = BucketWire(op, layout);
  int64_t bytes = wire.in + wire.out;
  for (size_t m = 0; m < layout.members.size(); ++m) {
    bytes += TensorBytes(layout.members[m], layout.itemsizes[m]);
  }
  return bytes;
}

}  // namespace reshard
