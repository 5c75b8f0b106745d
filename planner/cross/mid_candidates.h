// The intermediate states a cross-mesh plan chooses among, by cost
// (cross_planner.h). Neither side gathers what the other does not need:
//  - src_mid: `src` with each Partial dim reduced where the data is, to R
//    (all_reduce) or to a shard of any tensor dim (reduce_scatter); its
//    Shard and Replicate dims stay as they are.
//  - dst_mid: `dst` with Partial dims as R, and then some of its
//    Replicate dims (size > 1) sharded as well, so that each piece crosses
//    once and destination replicas finish with collectives among
//    themselves: none, each one alone, or all of them. A dim is sharded on
//    the tensor dim whose local extent is then the largest (the lowest on
//    a tie).
#ifndef RESHARD_PLANNER_CROSS_MID_CANDIDATES_H_
#define RESHARD_PLANNER_CROSS_MID_CANDIDATES_H_

#include <vector>

#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/tensor_spec.h"

namespace reshard {

// Past this many src_mid candidates, the candidates are every Partial dim
// as R, and that with one Partial dim sharded on the tensor dim with the
// largest local extent instead.
inline constexpr int kMaxSourceMidCandidates = 64;

// Distinct states, `src` with every Partial dim as R first.
std::vector<DistState> SourceMidCandidates(const Mesh& mesh,
                                           const DistState& src,
                                           const TensorSpec& tensor);

// Distinct states, `dst` with Partial dims as R first.
std::vector<DistState> DestinationMidCandidates(const Mesh& mesh,
                                                const DistState& dst,
                                                const TensorSpec& tensor);

// `state` with mesh dim `dim` appended as a shard of the tensor dim with
// the largest local extent under `state` (the lowest on a tie).
DistState ShardOnLargestDim(const Mesh& mesh, DistState state, int dim,
                            const TensorSpec& tensor);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MID_CANDIDATES_H_
