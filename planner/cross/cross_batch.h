// Many tensors moved between meshes as one schedule (docs/DESIGN.md §9): a
// model's weights from a training mesh to an inference mesh, each tensor
// from its own source mesh where it has one (a pipeline stage's
// sub-mesh). Each item is planned on its own (cross_planner.h); then:
//  - the pre-steps of the items that share a source mesh, and the
//    post-steps of all items (on the destination mesh), are bucketed as a
//    single-mesh batch's steps are (planner/batch/bucket_schedule.h): one
//    collective per bucket, not one per tensor;
//  - the transfers go into buckets first-fit, in item order: each into the
//    first bucket in which neither of its ranks then stages more than
//    `bucket_bytes` (what a rank sends plus what it receives; a transfer
//    larger than that is a bucket alone), so that every bucket keeps all
//    ranks busy; every rank pair's transfers within a bucket run as one
//    message.
// The schedule runs the pre-steps' buckets (source meshes in turn), the
// transfer buckets, then the post-steps' buckets.
#ifndef RESHARD_PLANNER_CROSS_CROSS_BATCH_H_
#define RESHARD_PLANNER_CROSS_CROSS_BATCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "planner/search/plan_cache.h"
#include "planner/search/search_support.h"

namespace reshard {

struct CrossBatchItem {
  std::string name;
  std::shared_ptr<const Mesh> src_mesh;  // null: the batch's source mesh
  CrossMeshRequest request;              // validated on its source mesh
  // Not OK for an item its caller could not build (a bad line of a batch
  // file): planned as that error.
  absl::Status invalid;
};

// `bucket_bytes` bounds the transfer buckets and the collective buckets.
// A bucket bound below one byte is INVALID_ARGUMENT naming bucket_bytes;
// an item that cannot be planned is that item's own error in `plans`. The
// buckets are priced on the first planned item's cross link.
absl::StatusOr<CrossBatchPlan> MakeCrossMeshBatch(
    const Mesh& src_mesh, const Mesh& dst_mesh,
    const std::vector<CrossBatchItem>& items, int64_t bucket_bytes,
    PlanCache* cache = nullptr, const StopCheck& stop = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_CROSS_BATCH_H_
