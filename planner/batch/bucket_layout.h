// One rank's part in one bucket (docs/DESIGN.md §8): each member step's
// StepLayout and where its padded block sits inside the bucket's packed block.
// The one definition of a bucket's wire format, beside step_layout.h's for a
// step: executors pack and unpack by it, tests check the schedule's byte counts
// against it.
//
// Wire format: a bucket exchanges packed blocks of `block_bytes`, the
// concatenation, in member order, of its members' padded blocks (each
// member's StepLayout block, in that member's dtype). Member m's block
// starts at `offsets[m]` inside every packed block, so a multi-block buffer
// (all_gather output, reduce_scatter input, all_to_all buffers) holds, in
// block j, every member's block j. Members of a group agree on every
// member's block, hence on the packed block: reductions (one dtype per
// bucket) combine packed blocks element by element.
#ifndef RESHARD_PLANNER_BATCH_BUCKET_LAYOUT_H_
#define RESHARD_PLANNER_BATCH_BUCKET_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/core/step_layout.h"

namespace reshard {

struct BucketLayout {
  int64_t group_size = 1;
  int64_t index = 0;                // this rank's index in its group
  int64_t block_bytes = 0;          // the packed block
  std::vector<StepLayout> members;  // in the bucket's member order
  std::vector<int64_t> offsets;     // bytes, member m's block in a block
  std::vector<int64_t> itemsizes;   // member m's dtype's size

  // Member m's padded block, in bytes.
  int64_t MemberBytes(size_t m) const {
    return members[m].BlockNumel() * itemsizes[m];
  }
};

// The layout of `bucket` for the rank at mesh `position`; `plans` are the
// batch's plans, indexed as the bucket's members index them.
BucketLayout MakeBucketLayout(const Mesh& mesh, const Bucket& bucket,
                              absl::Span<const Plan* const> plans,
                              int64_t position);

}  // namespace reshard

#endif  // RESHARD_PLANNER_BATCH_BUCKET_LAYOUT_H_
