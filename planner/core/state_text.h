// Parsing of the placement text forms users type (docs/DESIGN.md §2.2).
// Printing lives on DistState itself (ToString / ToTorchString).
#ifndef RESHARD_PLANNER_CORE_STATE_TEXT_H_
#define RESHARD_PLANNER_CORE_STATE_TEXT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/core/dist_state.h"

namespace reshard {

// Parses any text form of docs/DESIGN.md §2.2 — list form `S(0),R,P(sum)`,
// PyTorch's concatenated form `S(0)RP(sum)`, PyTorch reprs `Shard(dim=0)`,
// `Replicate()`, `Partial(sum)`, order suffixes `S(0)[1]S(0)[0]R`, optional
// surrounding brackets — for a mesh of `mesh_ndim` dims and a tensor of
// `tensor_rank` dims. Negative shard dims are normalized. Errors are
// INVALID_ARGUMENT with messages that start with `field` ("src").
absl::StatusOr<DistState> ParseDistState(absl::string_view text, int mesh_ndim,
                                         int tensor_rank,
                                         absl::string_view field);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_STATE_TEXT_H_
