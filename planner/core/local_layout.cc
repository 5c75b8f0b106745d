#include "planner/core/local_layout.h"

#include <algorithm>

#include "planner/core/chunking.h"

namespace reshard {

namespace {

// Applies `state`'s splits at `position` to `extent` and, when given,
// `offset`: every order's k-th split at once, for k = 0, 1, ... (as
// MaxLocalExtents: no per-dim order vectors).
void ApplySplits(const Mesh& mesh, const DistState& state, int64_t position,
                 int64_t* offset, int64_t* extent) {
  const int ndim = state.mesh_ndim();
  for (int index = 0; index < ndim; ++index) {
    for (int m = 0; m < ndim; ++m) {
      const Placement& p = state.placement(m);
      if (!p.is_shard() || state.order_index(m) != index) continue;
      const int d = p.dim();
      const int64_t c = mesh.Coordinate(position, m);
      if (offset != nullptr) {
        offset[d] += ChunkOffset(extent[d], mesh.size(m), c);
      }
      extent[d] = ChunkSize(extent[d], mesh.size(m), c);
    }
  }
}

}  // namespace

Box LocalBox(const Mesh& mesh, const DistState& state,
             absl::Span<const int64_t> shape, int64_t position) {
  Box box;
  box.offset.assign(shape.size(), 0);
  box.extent.assign(shape.begin(), shape.end());
  ApplySplits(mesh, state, position, box.offset.data(), box.extent.data());
  return box;
}

void LocalExtents(const Mesh& mesh, const DistState& state,
                  absl::Span<const int64_t> shape, int64_t position,
                  absl::Span<int64_t> extents) {
  std::copy(shape.begin(), shape.end(), extents.begin());
  ApplySplits(mesh, state, position, nullptr, extents.data());
}

int64_t MaxExtent(const Mesh& mesh, const DistState& state, int64_t extent,
                  int tensor_dim, int levels) {
  const std::vector<int> order = state.ShardOrder(tensor_dim);
  for (int i = 0; i < levels; ++i)
    extent = ChunkFull(extent, mesh.size(order[i]));
  return extent;
}

std::vector<int64_t> MaxLocalExtents(const Mesh& mesh, const DistState& state,
                                     absl::Span<const int64_t> shape) {
  // Apply every tensor dim's splits in order: the k-th split of every
  // order at once, for k = 0, 1, ... (no per-dim order vectors: searches
  // call this for every state they expand).
  std::vector<int64_t> out(shape.begin(), shape.end());
  const int ndim = state.mesh_ndim();
  for (int index = 0; index < ndim; ++index) {
    for (int m = 0; m < ndim; ++m) {
      const Placement& p = state.placement(m);
      if (p.is_shard() && state.order_index(m) == index) {
        out[p.dim()] = ChunkFull(out[p.dim()], mesh.size(m));
      }
    }
  }
  return out;
}

}  // namespace reshard
