// How a box (local_layout.h) of a row-major tensor lies in memory: as rows of
// contiguous elements, and whether it is one contiguous run. Copies walk
// boxes by it (executor/run/box_copy.h, executor/run/copy_program.h),
// and the step memory model (step_memory.h) decides by it when a collective
// sends from or receives into a tensor in place.
#ifndef RESHARD_PLANNER_CORE_BOX_RUNS_H_
#define RESHARD_PLANNER_CORE_BOX_RUNS_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "planner/core/local_layout.h"

namespace reshard {

// A box walked as rows of `run` contiguous elements: its trailing dims
// [inner, rank) merge into one run (those it covers fully, and the first it
// does not); the dims before `inner` are loops.
struct RowWalk {
  int inner = 0;
  int64_t run = 1;  // elements per run
};
RowWalk RowsOf(absl::Span<const int64_t> shape, const Box& box);

// The element offset of `box` in `tensor` when its elements form one
// contiguous run there (so it can be sent or received in place).
std::optional<int64_t> ContiguousOffset(absl::Span<const int64_t> shape,
                                        const Box& box);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_BOX_RUNS_H_
