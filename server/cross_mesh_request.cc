#include "server/cross_mesh_request.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/echoed_text.h"
#include "proto/convert.h"
#include "proto/cross_convert.h"

namespace reshard::server {
namespace {

// One side's mesh: registered (`id` set) or inline.
absl::StatusOr<std::shared_ptr<const Mesh>> SideMesh(
    const MeshRegistry& registry, const std::string& side, bool by_id,
    const std::string& id, bool inline_, const v1::Mesh& mesh) {
  if (by_id) {
    std::shared_ptr<const Mesh> registered = registry.Get(id);
    if (registered == nullptr) {
      return absl::NotFoundError(
          absl::StrCat(side, "_mesh_id: unknown mesh ", EchoedValue(id)));
    }
    return registered;
  }
  if (!inline_) {
    return absl::InvalidArgumentError(absl::StrCat(
        side, "_mesh_ref: set ", side, "_mesh_id or ", side, "_mesh"));
  }
  absl::StatusOr<Mesh> parsed = proto::MeshFromProto(mesh);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(side, "_mesh: ", parsed.status().message()));
  }
  return std::make_shared<const Mesh>(*std::move(parsed));
}

}  // namespace

absl::StatusOr<CrossMeshCall> CrossMeshCallOf(
    const MeshRegistry& registry, const v1::PlanCrossMeshRequest& proto,
    const ServiceOptions& limits) {
  using R = v1::PlanCrossMeshRequest;
  absl::StatusOr<std::shared_ptr<const Mesh>> src =
      SideMesh(registry, "src", proto.src_mesh_ref_case() == R::kSrcMeshId,
               proto.src_mesh_id(), proto.src_mesh_ref_case() == R::kSrcMesh,
               proto.src_mesh());
  if (!src.ok()) return src.status();
  absl::StatusOr<std::shared_ptr<const Mesh>> dst =
      SideMesh(registry, "dst", proto.dst_mesh_ref_case() == R::kDstMeshId,
               proto.dst_mesh_id(), proto.dst_mesh_ref_case() == R::kDstMesh,
               proto.dst_mesh());
  if (!dst.ok()) return dst.status();
  absl::StatusOr<CrossMeshRequest> request = proto::CrossRequestFromProto(
      **src, **dst, proto, limits.default_search_budget);
  if (!request.ok()) return request.status();
  if (request->options.search_budget > limits.max_search_budget) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.search_budget: ", request->options.search_budget,
                     " is above this server's limit of ",
                     limits.max_search_budget, " expanded states"));
  }
  request->options.max_search_bytes = limits.max_search_bytes;
  return CrossMeshCall{*std::move(src), *std::move(dst), *std::move(request)};
}

absl::StatusOr<CrossBatchCall> CrossBatchCallOf(
    const MeshRegistry& registry, const v1::PlanCrossMeshBatchRequest& proto,
    const ServiceOptions& limits) {
  const int tensors = proto.tensors_size();
  if (tensors < 1 || tensors > limits.max_batch_items) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensors: ", tensors, " items, 1 to ",
                     limits.max_batch_items, " per batch"));
  }
  if (proto.names_size() > tensors) {
    return absl::InvalidArgumentError(absl::StrCat(
        "names: ", proto.names_size(), " names for ", tensors, " tensors"));
  }
  CrossBatchCall call;
  call.bucket_bytes =
      proto.has_bucket_bytes() ? proto.bucket_bytes() : kDefaultBucketBytes;
  if (call.bucket_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bucket_bytes: must be at least 1, got ", call.bucket_bytes));
  }
  for (int t = 0; t < tensors; ++t) {
    absl::StatusOr<CrossMeshCall> one =
        CrossMeshCallOf(registry, proto.tensors(t), limits);
    const std::string field = absl::StrCat("tensors[", t, "].");
    if (!one.ok()) {
      return absl::Status(one.status().code(),
                          absl::StrCat(field, one.status().message()));
    }
    if (call.dst_mesh == nullptr) call.dst_mesh = one->dst_mesh;
    if (!(*one->dst_mesh == *call.dst_mesh)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field,
                       "dst_mesh: not tensors[0]'s destination mesh (a batch "
                       "moves to one mesh)"));
    }
    const std::string name =
        t < proto.names_size() ? proto.names(t) : absl::StrCat("item ", t);
    call.items.push_back({name, one->src_mesh, std::move(one->request)});
  }
  return call;
}

}  // namespace reshard::server
