#include "server/cross_mesh_request.h"

#include <string>
#include <utility>

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

}  // namespace reshard::server
