#include "planner/cross/cross_request.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/core/state_text.h"

namespace reshard {
namespace {

absl::Status CheckDestination(const DistState& dst) {
  for (int m = 0; m < dst.mesh_ndim(); ++m) {
    const Placement& p = dst.placement(m);
    if (p.is_partial() &&
        (p.op() == ReduceOp::kMax || p.op() == ReduceOp::kMin)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dst[", m, "]: ", dst.placement(m).ToString(),
          " cannot be a cross-mesh destination: no local step makes a "
          "P(max) or P(min) from received data (docs/DESIGN.md §9)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckUnavailable(const Mesh& src_mesh,
                              std::vector<int64_t>& ranks) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (src_mesh.PositionOfRank(ranks[i]) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unavailable_ranks[", i, "]: rank ", ranks[i],
                       " is not a rank of the source mesh"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (ranks[j] == ranks[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unavailable_ranks[", i, "]: rank ", ranks[i], " listed twice"));
      }
    }
  }
  std::sort(ranks.begin(), ranks.end());
  return absl::OkStatus();
}

absl::Status CheckCrossLink(const LinkParams& link) {
  if (link.bandwidth_gbps.has_value() &&
      !(*link.bandwidth_gbps >= kMinLinkBandwidthGBps &&
        *link.bandwidth_gbps <= kMaxLinkBandwidthGBps)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cross_link.bandwidth_gbps: ", *link.bandwidth_gbps, " is outside [",
        kMinLinkBandwidthGBps, ", ", kMaxLinkBandwidthGBps, "]"));
  }
  if (link.latency_us.has_value() &&
      !(*link.latency_us >= 0 && *link.latency_us <= kMaxLinkLatencyUs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cross_link.latency_us: ", *link.latency_us,
                     " is outside [0, ", kMaxLinkLatencyUs, "]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateCrossMeshRequest(const Mesh& src_mesh,
                                      const Mesh& dst_mesh,
                                      CrossMeshRequest& request) {
  if (request.options.planner != PlannerKind::kOptimal) {
    return absl::InvalidArgumentError(
        "planner: cross-mesh plans are made by the optimal planner only");
  }
  if (request.options.cost_model != CostModelKind::kAlphaBeta) {
    return absl::InvalidArgumentError(
        "cost_model: cross-mesh plans are priced by alpha_beta only");
  }
  if (request.src.mesh_ndim() != src_mesh.ndim() ||
      request.dst.mesh_ndim() != dst_mesh.ndim()) {
    return absl::InvalidArgumentError(
        "src, dst: one placement per dim of the source and destination "
        "meshes");
  }
  for (const auto& [name, mesh] :
       {std::pair{"src_mesh", &src_mesh}, std::pair{"dst_mesh", &dst_mesh}}) {
    if (mesh->world_size() > kMaxCrossMeshRanks) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", mesh->world_size(),
                       " ranks; cross-mesh plans take "
                       "meshes of at most ",
                       kMaxCrossMeshRanks));
    }
  }
  absl::Status s = CheckDestination(request.dst);
  if (s.ok()) s = CheckUnavailable(src_mesh, request.unavailable_ranks);
  if (s.ok()) s = CheckCrossLink(request.cross_link);
  return s;
}

absl::StatusOr<CrossMeshRequest> ParseCrossMeshRequest(
    const Mesh& src_mesh, const Mesh& dst_mesh, std::vector<int64_t> shape,
    absl::string_view dtype, absl::string_view src, absl::string_view dst,
    std::vector<int64_t> unavailable_ranks, LinkParams cross_link,
    PlanOptions options) {
  // The source side's request parses the tensor and `src`; the
  // destination's parses `dst` on its own mesh.
  absl::StatusOr<PlanRequest> on_src =
      ParsePlanRequest(src_mesh, shape, dtype, src, src, options);
  if (!on_src.ok()) return on_src.status();
  absl::StatusOr<DistState> dst_state =
      ParseDistState(dst, dst_mesh.ndim(), on_src->tensor.rank(), "dst");
  if (!dst_state.ok()) return dst_state.status();
  CrossMeshRequest request{on_src->tensor, on_src->src,
                           *dst_state,     std::move(unavailable_ranks),
                           cross_link,     options};
  absl::Status s = ValidateCrossMeshRequest(src_mesh, dst_mesh, request);
  if (!s.ok()) return s;
  return request;
}

}  // namespace reshard
