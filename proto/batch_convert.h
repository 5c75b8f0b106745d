// PlanBatch's wire form (docs/DESIGN.md §8) <-> the core batch (planner/
// batch_plan.h): its options, and its response of per-item plans or
// errors plus the bucketed schedule. Kept apart from convert.h, which
// converts single plans, so that batches are one concept in one file.
#ifndef RESHARD_PROTO_BATCH_CONVERT_H_
#define RESHARD_PROTO_BATCH_CONVERT_H_

#include <string>

#include "absl/status/statusor.h"
#include "planner/batch/batch_plan.h"
#include "planner/core/mesh.h"
#include "reshard/v1/planner.pb.h"

namespace reshard::proto {

// The batch options a request carries (an unset bucket_bytes is the
// default; the core refuses values below 1, naming `bucket_bytes`).
BatchOptions BatchOptionsFromProto(const v1::PlanBatchRequest& request);
void BatchOptionsToProto(const BatchOptions& options,
                         v1::PlanBatchRequest* request);

// Fills `response`: one Plan per item (empty for an item with an error,
// which is listed in `errors`), every plan tagged with `mesh_id`, the
// buckets and the totals.
void BatchPlanToProto(const Mesh& mesh, const BatchPlan& batch,
                      const std::string& mesh_id,
                      v1::PlanBatchResponse* response);

// Rebuilds the batch of `items` items from a response: plans are re-parsed
// and checked (PlanFromProto), and every bucket member must name a
// communicating step of a planned item that agrees with the bucket's op
// and group. INVALID_ARGUMENT naming the field otherwise.
absl::StatusOr<BatchPlan> BatchPlanFromProto(
    const Mesh& mesh, const v1::PlanBatchResponse& response, int items);

}  // namespace reshard::proto

#endif  // RESHARD_PROTO_BATCH_CONVERT_H_
