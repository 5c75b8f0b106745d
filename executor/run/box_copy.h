// Moves a box (planner/core/local_layout.h) of a row-major tensor to and from a
// contiguous run, the packed form blocks travel in
// (planner/core/step_layout.h). Rows of the box that are contiguous in the
// tensor move with one memcpy.
#ifndef RESHARD_EXECUTOR_RUN_BOX_COPY_H_
#define RESHARD_EXECUTOR_RUN_BOX_COPY_H_

#include <cstdint>
#include <cstring>

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
