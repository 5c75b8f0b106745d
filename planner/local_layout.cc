#include "planner/local_layout.h"

#include "planner/chunking.h"

namespace reshard {

Box LocalBox(const Mesh& mesh, const DistState& state,
             absl::Span<const int64_t> shape, int64_t position) {
  Box box;
  box.offset.assign(shape.size(), 0);
  box.extent.assign(shape.begin(), shape.end());
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    const std::vector<int> order = state.ShardOrder(d);
    for (int m : order) {
      const int64_t c = mesh.Coordinate(position, m);
      box.offset[d] += ChunkOffset(box.extent[d], mesh.size(m), c);
      box.extent[d] = ChunkSize(box.extent[d], mesh.size(m), c);
    }
  }
  return box;
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
  std::vector<int64_t> out(shape.begin(), shape.end());
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    out[d] = MaxExtent(mesh, state, shape[d], d, state.ShardDepth(d));
  }
  return out;
}

}  // namespace reshard
