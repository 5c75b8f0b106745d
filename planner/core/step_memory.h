// What one rank's runner holds while it runs one step or one bucket of
// several (docs/DESIGN.md §3.3): the step's input and output tensors, and the
// packed wire buffers its collective needs beyond them. A collective sends
// from its input in place when the blocks it sends are the input's
// consecutive full blocks, and receives into its output in place likewise;
// otherwise it packs into, or unpacks from, a wire buffer. The one home of
// this accounting: the executor sizes its buffers and measures its
// peak_bytes by it, and plan_memory.h takes its maximum over the ranks as a
// plan's and a batch's peak_bytes.
#ifndef RESHARD_PLANNER_CORE_STEP_MEMORY_H_
#define RESHARD_PLANNER_CORE_STEP_MEMORY_H_

#include <cstdint>

#include "planner/batch/bucket_layout.h"
#include "planner/core/step.h"
#include "planner/core/step_layout.h"

namespace reshard {

// Whether a collective sends from its input (`send`) and receives into its
// output (`recv`) in place.
struct DirectPaths {
  bool send = false;
  bool recv = false;
};
DirectPaths ChooseDirectPaths(StepOp op, const StepLayout& layout);

// The packed wire buffers, in bytes, beyond the step's tensors.
struct WireUse {
  int64_t in = 0;
  int64_t out = 0;
};
WireUse StepWire(StepOp op, const StepLayout& layout, DirectPaths direct,
                 int64_t itemsize);
// StepWire from a member's sizes: blocks of `block_numel` elements, an
// output of `out_numel`.
WireUse StepWireOf(StepOp op, int64_t group_size, int64_t block_numel,
                   int64_t out_numel, DirectPaths direct, int64_t itemsize);
// StepWire's formula on sizes: a group of `group_size` exchanging blocks of
// `block` bytes; `padded_part`: a reduce_scatter member's part is smaller
// than the block, so it is reduced into a wire block first.
WireUse CollectiveWire(StepOp op, int64_t group_size, int64_t block,
                       DirectPaths direct, bool padded_part);

// Input, output and wire bytes of `op` at `layout` with `direct` paths
// (no paths in place: an upper bound over the group's members).
int64_t StepBytesWith(StepOp op, const StepLayout& layout, int64_t itemsize,
                      DirectPaths direct);
// The same with the paths ChooseDirectPaths takes; 0 for a step on a group
// of one, which runners skip.
int64_t StepLiveBytes(StepOp op, const StepLayout& layout, int64_t itemsize);

// A bucket of several members: its packed wire buffers (all_reduce reduces
// its input buffer in place).
WireUse BucketWire(StepOp op, const BucketLayout& layout);
// BucketWire's formula on sizes: packed blocks of `block` bytes.
WireUse PackedWire(StepOp op, int64_t group_size, int64_t block);
// The bucket's wire and every member's input and output.
int64_t BucketLiveBytes(StepOp op, const BucketLayout& layout);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_STEP_MEMORY_H_
