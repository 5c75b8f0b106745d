// A cross-mesh request and its plan (docs/DESIGN.md §9), plain values as
// Plan is. The request moves one global tensor from `src` on a source mesh
// to `dst` on a destination mesh, the two placed in one global rank space
// by their rank maps (disjoint, overlapping, nested or the same ranks
// permuted). The plan: `pre` on the source mesh from src to src_mid
// (reductions where the data is), point-to-point `transfers` from src_mid
// to dst_mid, and `post` on the destination mesh from dst_mid to dst.
#ifndef RESHARD_PLANNER_CROSS_CROSS_PLAN_H_
#define RESHARD_PLANNER_CROSS_CROSS_PLAN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/core/tensor_spec.h"
#include "planner/search/plan_request.h"

namespace reshard {

struct CrossMeshRequest {
  TensorSpec tensor;
  DistState src;  // on the source mesh
  DistState dst;  // on the destination mesh; no P(max) or P(min)
  // Source ranks that must not send (a job re-meshed after losing nodes),
  // ascending, each a rank of the source mesh.
  std::vector<int64_t> unavailable_ranks;
  // The link every point-to-point transfer is priced on; unset fields take
  // the slower of the two meshes' outermost (dim 0) links.
  LinkParams cross_link;
  // planner must be kOptimal and cost_model kAlphaBeta: the pre- and
  // post-steps are planned with these options.
  PlanOptions options;
  // The plan cache scope of the pre- and post-steps (PlanRequest's).
  uint64_t cache_scope = 0;
};

// A box of the global tensor (offset and extent per tensor dim) that one
// global rank sends another; equal ranks: a rank's copy to itself.
struct Transfer {
  int64_t from = 0;
  int64_t to = 0;
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t e : extent) n *= e;
    return n;
  }
  bool operator==(const Transfer&) const = default;
};

// Bytes sent and received between different ranks (a rank's copy to
// itself is not counted).
struct TransferBytes {
  int64_t max_send = 0;
  double mean_send = 0;  // over the ranks that send
  int64_t max_recv = 0;
  int64_t total = 0;
};

struct CrossMeshPlan {
  TensorSpec tensor;
  DistState src, dst, src_mid, dst_mid;
  Plan pre;                         // on the source mesh
  Plan post;                        // on the destination mesh
  std::vector<Transfer> transfers;  // the sender rule's order (transfer.h)
  std::vector<int64_t> unavailable_ranks;
  LinkParams cross_link;  // both fields set: what the transfers cost on
  double transfer_time_us = 0;
  TransferBytes bytes_by_rank;
  double total_time_us = 0;  // pre + transfers + post
  int64_t total_bytes = 0;   // pre + transfers.total + post
  // The most one rank holds: its source role's peak plus its destination
  // role's for a rank in both meshes (CrossPeakBytes).
  int64_t peak_bytes = 0;
  uint64_t layout_digest = 0;  // layout_digest.h
  std::vector<Warning> warnings;
  double planning_us = 0;
};

// A bucket of a cross-mesh batch's transfers (planner/cross/cross_batch.h
// makes them): (item, transfer index) pairs.
struct CrossBucket {
  std::vector<std::pair<int, int>> members;
  int64_t bytes = 0;           // sent between different ranks
  int64_t max_rank_bytes = 0;  // the most one rank sends plus receives
  int64_t messages = 0;        // rank pairs that exchange data
  double time_us = 0;          // priced as one phase (cross_cost.h)
};

// A cross-mesh batch's schedule (planner/cross/cross_batch.h).
struct CrossBatchPlan {
  std::vector<absl::StatusOr<CrossMeshPlan>> plans;  // in item order
  // The pre-steps bucketed per source mesh (one schedule per distinct
  // source mesh, in order of first use, over every item's plan: items of
  // other meshes take no part), and the post-steps on the destination mesh.
  std::vector<BucketSchedule> pre_schedules;
  BucketSchedule post_schedule;
  std::vector<CrossBucket> buckets;
  double pre_time_us = 0;       // every planned item's pre-steps, in turn
  double post_time_us = 0;      // and post-steps
  double transfer_time_us = 0;  // the buckets, in turn
  double total_time_us = 0;
  int64_t total_bytes = 0;
  TransferBytes bytes_by_rank;  // over the whole schedule
  double planning_us = 0;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_CROSS_PLAN_H_
