// Moves a box (planner/core/local_layout.h) of a row-major tensor to and from a
// contiguous run, the packed form blocks travel in
// (planner/core/step_layout.h). Rows of the box that are contiguous in the
// tensor move with one memcpy.
#ifndef RESHARD_EXECUTOR_RUN_BOX_COPY_H_
#define RESHARD_EXECUTOR_RUN_BOX_COPY_H_

#include <cstdint>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "planner/core/box_runs.h"
#include "planner/core/local_layout.h"

namespace reshard::executor {

// memcpy / memset that accept empty ranges with null pointers (an empty
// std::vector's data() may be null, which memcpy does not allow).
inline void CopyBytes(void* to, const void* from, int64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, static_cast<size_t>(bytes));
}
inline void ZeroBytes(void* to, int64_t bytes) {
  if (bytes > 0) std::memset(to, 0, static_cast<size_t>(bytes));
}

// Calls f(tensor_offset, packed_offset, count) per contiguous run of `box`
// in `shape`, in elements, in packed (row-major) order. Tensors of up to
// kInlineRank dims walk without touching the heap: a repeated run copies
// thousands of boxes.
inline constexpr int kInlineRank = 8;

template <typename F>
void ForEachBoxRun(absl::Span<const int64_t> shape, const Box& box, F f) {
  if (box.numel() == 0) return;
  const int rank = static_cast<int>(shape.size());
  absl::InlinedVector<int64_t, kInlineRank> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  const RowWalk walk = RowsOf(shape, box);
  int64_t base = 0;
  for (int d = 0; d < rank; ++d) base += box.offset[d] * stride[d];
  absl::InlinedVector<int64_t, kInlineRank> index(walk.inner, 0);
  for (int64_t packed = 0;; packed += walk.run) {
    int64_t at = base;
    for (int d = 0; d < walk.inner; ++d) at += index[d] * stride[d];
    f(at, packed, walk.run);
    int d = walk.inner - 1;
    while (d >= 0 && ++index[d] == box.extent[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

// Copies `box` of `tensor` (shape `shape`, `itemsize` bytes per element) to
// `packed`, row-major.
void PackBox(const void* tensor, absl::Span<const int64_t> shape,
             const Box& box, int64_t itemsize, void* packed);

// Copies `packed` (row-major, box-shaped) into `box` of `tensor`.
void UnpackBox(const void* packed, void* tensor,
               absl::Span<const int64_t> shape, const Box& box,
               int64_t itemsize);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_BOX_COPY_H_
