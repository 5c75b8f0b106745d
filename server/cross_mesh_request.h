// PlanCrossMesh's request in core form (docs/DESIGN.md §9): both meshes
// (registered or inline), the request within this server's limits.
#ifndef RESHARD_SERVER_CROSS_MESH_REQUEST_H_
#define RESHARD_SERVER_CROSS_MESH_REQUEST_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_request.h"
#include "reshard/v1/planner.pb.h"
#include "server/mesh_registry.h"
#include "server/service_call.h"

namespace reshard::server {

struct CrossMeshCall {
  std::shared_ptr<const Mesh> src_mesh;
  std::shared_ptr<const Mesh> dst_mesh;
  CrossMeshRequest request;
};

// NOT_FOUND naming src_mesh_id or dst_mesh_id for an unknown mesh;
// INVALID_ARGUMENT naming the field for an invalid mesh or request, or a
// search budget above the server's limit.
absl::StatusOr<CrossMeshCall> CrossMeshCallOf(
    const MeshRegistry& registry, const v1::PlanCrossMeshRequest& proto,
    const ServiceOptions& limits);

// PlanCrossMeshBatch's request: every tensor as CrossMeshCallOf takes it
// (its errors prefixed "tensors[t]."), on one destination mesh.
struct CrossBatchCall {
  std::shared_ptr<const Mesh> dst_mesh;
  std::vector<CrossBatchItem> items;  // each with its own source mesh
  int64_t bucket_bytes = 0;
};

// INVALID_ARGUMENT for no tensors or more than limits.max_batch_items,
// more names than tensors, bucket_bytes below 1, or a tensor whose
// destination mesh is not the first's (naming tensors[t].dst_mesh).
absl::StatusOr<CrossBatchCall> CrossBatchCallOf(
    const MeshRegistry& registry, const v1::PlanCrossMeshBatchRequest& proto,
    const ServiceOptions& limits);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_CROSS_MESH_REQUEST_H_
