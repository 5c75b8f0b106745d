// Building and checking a cross-mesh request (planner/cross/cross_plan.h,
// docs/DESIGN.md §9).
#ifndef RESHARD_PLANNER_CROSS_CROSS_REQUEST_H_
#define RESHARD_PLANNER_CROSS_CROSS_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "planner/search/plan_request.h"

namespace reshard {

// The most ranks either mesh of a cross-mesh request may have: the sender
// rule looks at every position of both.
inline constexpr int64_t kMaxCrossMeshRanks = int64_t{1} << 20;

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
