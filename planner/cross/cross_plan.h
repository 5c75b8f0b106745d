// A cross-mesh plan (docs/DESIGN.md §9): `pre` on the source mesh from src
// to src_mid (reductions where the data is), point-to-point `transfers`
// from src_mid to dst_mid, and `post` on the destination mesh from dst_mid
// to dst. A plain value, as Plan is.
#ifndef RESHARD_PLANNER_CROSS_CROSS_PLAN_H_
#define RESHARD_PLANNER_CROSS_CROSS_PLAN_H_

#include <cstdint>
#include <vector>

#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/core/tensor_spec.h"
#include "planner/cross/transfer.h"

namespace reshard {

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
  std::vector<Transfer> transfers;  // the sender rule's (transfer.h) order
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

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_CROSS_PLAN_H_
