// Cross-mesh requests and plans (docs/DESIGN.md §9) between the core
// (planner/cross/) and reshard.v1: the one place they convert.
#ifndef RESHARD_PROTO_CROSS_CONVERT_H_
#define RESHARD_PROTO_CROSS_CONVERT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "planner/cross/cross_request.h"
#include "reshard/v1/planner.pb.h"

namespace reshard::proto {

// The request on its two meshes, validated (ValidateCrossMeshRequest);
// `default_budget` replaces an unset search budget.
absl::StatusOr<CrossMeshRequest> CrossRequestFromProto(
    const Mesh& src_mesh, const Mesh& dst_mesh,
    const v1::PlanCrossMeshRequest& proto, int64_t default_budget);

// The request with both meshes inline (for clients).
v1::PlanCrossMeshRequest CrossRequestToProto(const Mesh& src_mesh,
                                             const Mesh& dst_mesh,
                                             const CrossMeshRequest& request);

// Lists at most `max_listed` transfers, else none and transfers_omitted.
void CrossPlanToProto(const Mesh& src_mesh, const Mesh& dst_mesh,
                      const CrossMeshPlan& plan, int64_t max_listed,
                      v1::CrossMeshPlan* proto);

// A plan and the meshes it carries. Omitted transfers are expanded again
// by the sender rule (planner/cross/transfer.h).
struct CrossPlanWithMeshes {
  Mesh src_mesh;
  Mesh dst_mesh;
  CrossMeshPlan plan;
};
absl::StatusOr<CrossPlanWithMeshes> CrossPlanFromProto(
    const v1::CrossMeshPlan& proto);

// A cross-mesh batch's schedule as PlanCrossMeshBatch answers it: item t's
// plan on (src_meshes[t], dst_mesh), the plans together listing at most
// `max_listed` transfers (an equal share each, all or none per plan), or
// its error.
void CrossBatchToProto(const std::vector<const Mesh*>& src_meshes,
                       const Mesh& dst_mesh, const CrossBatchPlan& batch,
                       int64_t max_listed,
                       v1::PlanCrossMeshBatchResponse* proto);
// And back: every plan (omitted transfers expanded again) or its error,
// the buckets and the totals; the pre- and post-steps' schedules carry
// only their collective counts. INVALID_ARGUMENT naming plans[t] for a
// plan that does not convert.
absl::StatusOr<CrossBatchPlan> CrossBatchFromProto(
    const v1::PlanCrossMeshBatchResponse& proto);

}  // namespace reshard::proto

#endif  // RESHARD_PROTO_CROSS_CONVERT_H_
