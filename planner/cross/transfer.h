// Point-to-point transfers of a cross-mesh plan (docs/DESIGN.md §9) and the
// sender rule that makes them from the plan's compact form: every rank
// expands the transfers it sends or receives from the meshes, the tensor,
// `src_mid`, `dst_mid` and the unavailable ranks alone.
//
// The rule, "least_loaded_holder": the source boxes under `src_mid` are
// taken in the order of their first holder's position; each destination
// position (row-major) needs, from each source box that meets its box
// under `dst_mid`, the intersection. A receiver that holds the source box
// copies it itself; otherwise the box's available holder with the fewest
// bytes assigned so far sends it (the lowest position on a tie). A holder
// holds one box, so each box's senders are balanced on their own and a
// rank replays only the boxes it holds or needs.
#ifndef RESHARD_PLANNER_CROSS_TRANSFER_H_
#define RESHARD_PLANNER_CROSS_TRANSFER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/core/dist_state.h"
#include "planner/core/local_layout.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"

namespace reshard {

// The rule's name in plan JSON and on the wire.
inline constexpr char kSenderRuleName[] = "least_loaded_holder";

// What the rule needs beyond the plan's states.
struct TransferLayout {
  const Mesh& src_mesh;
  const Mesh& dst_mesh;
  absl::Span<const int64_t> shape;
  const DistState& src_mid;
  const DistState& dst_mid;
  absl::Span<const int64_t> unavailable_ranks;  // ascending
};

// The most (destination position, source box) pairs a plan may check:
// the rule's work, and an upper bound on its transfers.
inline constexpr int64_t kMaxBoxPairs = int64_t{1} << 28;

// Every transfer, in the rule's order. FAILED_PRECONDITION when a source
// box that a destination needs is held only by unavailable ranks, naming
// the box and its holders; RESOURCE_EXHAUSTED past kMaxBoxPairs.
absl::StatusOr<std::vector<Transfer>> ExpandTransfers(
    const TransferLayout& layout);

// The transfers `rank` sends or receives, in the rule's order: what
// ExpandTransfers lists with `rank` at either end, computed from the
// source boxes `rank` holds or needs only.
absl::StatusOr<std::vector<Transfer>> TransfersOfRank(
    const TransferLayout& layout, int64_t rank);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_TRANSFER_H_
