// A cross-mesh request (docs/DESIGN.md §9): one global tensor moving from
// `src` on a source mesh to `dst` on a destination mesh, the two placed in
// one global rank space by their rank maps (disjoint, overlapping, nested
// or the same ranks permuted).
#ifndef RESHARD_PLANNER_CROSS_CROSS_REQUEST_H_
#define RESHARD_PLANNER_CROSS_CROSS_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
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
};

// Builds a request from the text forms users type. INVALID_ARGUMENT names
// the field: `tensor.shape[1]`, `src[0]`, `dst[1]` (a P(max) or P(min)
// destination, which no local step produces), `unavailable_ranks[2]` (not
// a source rank, or listed twice), `cross_link.bandwidth_gbps`, `planner`,
// `cost_model`.
absl::StatusOr<CrossMeshRequest> ParseCrossMeshRequest(
    const Mesh& src_mesh, const Mesh& dst_mesh, std::vector<int64_t> shape,
    absl::string_view dtype, absl::string_view src, absl::string_view dst,
    std::vector<int64_t> unavailable_ranks, LinkParams cross_link,
    PlanOptions options);

// The same checks on a request built in code (ParseCrossMeshRequest calls
// it); sorts `unavailable_ranks`.
absl::Status ValidateCrossMeshRequest(const Mesh& src_mesh,
                                      const Mesh& dst_mesh,
                                      CrossMeshRequest& request);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_CROSS_REQUEST_H_
