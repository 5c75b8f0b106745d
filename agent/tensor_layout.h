// A registered tensor's layout (docs/DESIGN.md §6.6, §9): the global shape,
// the mesh with its rank map and the placements its process holds its
// block under. An agent keeps it with the registration and binds a run's
// source or destination only where the run moves the tensor as laid out
// (fail closed: a trainer and an inference engine that disagree on a
// layout stop every rank before any data moves, naming the rank and the
// tensor).
#ifndef RESHARD_AGENT_TENSOR_LAYOUT_H_
#define RESHARD_AGENT_TENSOR_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"

namespace reshard::agent {

struct TensorLayout {
  std::vector<int64_t> global_shape;
  Mesh mesh;  // dim names are labels: only sizes and rank map count
  DistState state;
};

// OK when `local_shape` is `layout`'s block at global `rank`;
// INVALID_ARGUMENT naming "layout" otherwise (or when the rank is not in
// the mesh).
absl::Status CheckLayoutBlock(const TensorLayout& layout, int64_t rank,
                              const std::vector<int64_t>& local_shape);

// Why `registered` is not `wanted` (the mesh sizes, the rank map, the
// placements with their order, the global shape), in words naming both;
// nullopt when they are the same layout.
std::optional<std::string> LayoutDifference(const TensorLayout& registered,
                                            const TensorLayout& wanted);

// "[8, 4] as S(0) on a mesh [4] of ranks [0, 1, 2, 3]".
std::string LayoutText(const TensorLayout& layout);

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_TENSOR_LAYOUT_H_
