// A BucketSchedule is the order in which a batch of tensors' plans run as
// few collectives as docs/DESIGN.md §8 allows: an ordered list of buckets, each
// one collective (op, group, reduce op, avg divisor) over the packed blocks of
// several tensors' steps. Moving a model's weights tensor by tensor pays
// one collective latency per tensor step; a bucket pays it once.
//
// Rules (docs/DESIGN.md §8, normative):
//  - every communicating step (a collective on a group of size > 1) of
//    every planned tensor is a member of exactly one bucket, and a tensor's
//    steps sit in strictly later buckets than its earlier steps;
//  - a bucket's members share op, group, reduce op and avg divisor; groups
//    that differ only by size-1 dims are one group (Mesh::SameRanks);
//    reductions (all_reduce, reduce_scatter) hold one dtype, data movement
//    (all_gather, all_to_all) may mix dtypes, packed by bytes;
//  - a bucket's bytes (the larger of its packed input and output buffers on
//    the largest rank, from step_layout.h's padded blocks) are at most
//    `bucket_bytes`, unless one step alone is larger (it then runs alone);
//  - local steps and steps on groups of size 1 are not bucketed: they run
//    at their tensor's point in its order, i.e. before the bucket holding
//    the tensor's next communicating step (or after its last);
//  - the schedule depends only on the plans, in order, and the options.
// Running the buckets in order, each as its members' steps, gives every
// tensor exactly the result of running its own plan alone.
#ifndef RESHARD_PLANNER_BATCH_BUCKET_SCHEDULE_H_
#define RESHARD_PLANNER_BATCH_BUCKET_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/core/step.h"
#include "planner/cost/cost_model.h"

namespace reshard {

// docs/DESIGN.md §8's default cap on a bucket's bytes (25 MiB, PyTorch DDP's).
inline constexpr int64_t kDefaultBucketBytes = int64_t{25} << 20;

// Step `step` of batch item `tensor` (0-based indices into the batch and
// into that item's plan).
struct BucketMember {
  int tensor = 0;
  int step = 0;
  bool operator==(const BucketMember&) const = default;
};

// One collective over its members' packed blocks, in member order.
struct Bucket {
  StepOp op = StepOp::kAllGather;
  Group group;  // its first member's; the others' have the same ranks
  // The members' reduce op and avg divisor; sum and 1 for data movement.
  ReduceOp reduce_op = ReduceOp::kSum;
  int64_t avg_divisor = 1;
  // The packed buffers on the largest rank (the sums of the members' padded
  // buffers), and the larger of the two: the bucket's bytes.
  int64_t in_bytes = 0;
  int64_t out_bytes = 0;
  int64_t bytes = 0;
  // The bucket priced as one collective moving the members' bytes, plus
  // packing them into its wire buffers and out (CostModel::PackingUsPerByte);
  // a bucket of one member: that member's step.
  double time_us = 0;
  std::vector<BucketMember> members;

  // True for all_reduce and reduce_scatter (their reduce op means
  // something; their members share a dtype).
  bool Reduces() const;
};

struct BucketSchedule {
  std::vector<Bucket> buckets;
  // Communicating steps of the planned tensors, run tensor by tensor,
  // against buckets.
  int64_t collectives_before = 0;
  int64_t collectives_after = 0;
  // Modelled time of every step of every planned tensor, tensor by tensor,
  // against the buckets plus the steps that are not bucketed.
  double time_us_before = 0;
  double time_us_after = 0;
  // The most bytes one rank's runner holds at once running the planned
  // tensors as these buckets (plan_memory.h's BatchPeakBytes).
  int64_t peak_bytes = 0;
};

struct BucketOptions {
  int64_t bucket_bytes = kDefaultBucketBytes;  // >= 1
  // The batch's cost model (the plans' own) and host size, to price
  // buckets the way the plans' steps were priced.
  CostOptions cost;
};

// Buckets the communicating steps of `plans` (one per batch item, nullptr
// for an item without a plan, which takes no part). Every plan must be a
// plan on `mesh` priced under `options.cost`. INVALID_ARGUMENT naming
// `bucket_bytes` when it is below 1.
absl::StatusOr<BucketSchedule> ScheduleBuckets(
    const Mesh& mesh, absl::Span<const Plan* const> plans,
    const BucketOptions& options);

// Checks that `schedule` is a schedule of `plans` by the rules above (byte
// caps aside, a planning choice): every member names a communicating step
// of a planned item that agrees with its bucket's op, group, reduce op,
// divisor and, for reductions, dtype; a tensor's steps sit in strictly
// later buckets than its earlier steps; every communicating step is a
// member exactly once. INVALID_ARGUMENT naming `buckets[b].members[k]` (or
// the uncovered `tensors[t].steps[j]`) otherwise. Executors check schedules
// from files or the wire with it before running them.
absl::Status CheckBucketSchedule(const Mesh& mesh,
                                 absl::Span<const Plan* const> plans,
                                 const BucketSchedule& schedule);

// The schedule that runs `plans` tensor by tensor: one bucket per
// communicating step, in tensor order (what `--no-bucketing` runs), priced
// like ScheduleBuckets.
BucketSchedule UnbucketedSchedule(const Mesh& mesh,
                                  absl::Span<const Plan* const> plans,
                                  const CostOptions& cost);

}  // namespace reshard

#endif  // RESHARD_PLANNER_BATCH_BUCKET_SCHEDULE_H_
