#include "planner/core/box_runs.h"

namespace reshard {

RowWalk RowsOf(absl::Span<const int64_t> shape, const Box& box) {
  const int rank = static_cast<int>(shape.size());
  RowWalk walk{rank, 1};
  while (walk.inner > 0) {
    const int d = walk.inner - 1;
    walk.run *= box.extent[d];
    walk.inner = d;
    if (box.extent[d] != shape[d]) break;
  }
  return walk;
}

std::optional<int64_t> ContiguousOffset(absl::Span<const int64_t> shape,
                                        const Box& box) {
  const RowWalk walk = RowsOf(shape, box);
  for (int d = 0; d < walk.inner; ++d) {
    if (box.extent[d] != 1) return std::nullopt;
  }
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    offset = offset * shape[d] + box.offset[d];
  }
  return offset;
}

}  // namespace reshard
