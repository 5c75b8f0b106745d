// The layout digest of a cross-mesh request (docs/DESIGN.md §9): FNV-1a
// (common/fnv1a.h) of the canonical JSON of both meshes (with their rank
// maps and flattened groups), the tensor's shape and dtype, `src` and
// `dst`. Every rank of a run recomputes it from its own layouts and
// refuses a plan whose digest differs, before any data moves.
#ifndef RESHARD_PLANNER_CROSS_LAYOUT_DIGEST_H_
#define RESHARD_PLANNER_CROSS_LAYOUT_DIGEST_H_

#include <cstdint>
#include <string>

#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/tensor_spec.h"

namespace reshard {

// {"src_mesh":{...},"dst_mesh":{...},"tensor":{"shape":[..],"dtype":".."},
//  "src":"..","dst":".."}, one line, keys in this order, mesh objects as
// plan JSON writes them with `rank_map` (the identity written out).
std::string LayoutJson(const Mesh& src_mesh, const Mesh& dst_mesh,
                       const TensorSpec& tensor, const DistState& src,
                       const DistState& dst);

uint64_t LayoutDigest(const Mesh& src_mesh, const Mesh& dst_mesh,
                      const TensorSpec& tensor, const DistState& src,
                      const DistState& dst);

// 16 lowercase hex digits, as plan JSON writes it.
std::string DigestHex(uint64_t digest);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_LAYOUT_DIGEST_H_
