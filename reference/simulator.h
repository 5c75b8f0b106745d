// The reference simulator: the judge of every plan any planner emits.
//
// It runs a plan on every rank's local buffer in one process, the way an
// executor would — collectives pad every member's block to the largest block
// in the group, exchange, and trim, with sizes each rank derives from
// (global shape, state, coordinates) — and checks every rank's result
// exactly against the destination state. It never consults the global tensor
// while running steps, so a plan that moves the wrong data fails.
//
// Part of the reference library (`reshard_reference`), linked by tests and
// tools only: it judges the executor, so it keeps its own data movement
// (its own group chunking and padding) instead of the core's StepLayout.
#ifndef RESHARD_REFERENCE_SIMULATOR_H_
#define RESHARD_REFERENCE_SIMULATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

// One rank's dense row-major local tensor.
template <typename T>
struct LocalTensor {
  std::vector<int64_t> shape;
  std::vector<T> data;
};

// Runs `step` on the buffers of every mesh position (indexed by position).
// Each buffer must have the shape its rank holds under `step.from`.
// INVALID_ARGUMENT when a buffer's shape disagrees with the state (the plan
// is inconsistent). Supported T: int64_t and double.
template <typename T>
absl::Status RunStep(const Mesh& mesh, absl::Span<const int64_t> global_shape,
                     const Step& step, std::vector<LocalTensor<T>>& buffers);

}  // namespace reshard

#endif  // RESHARD_REFERENCE_SIMULATOR_H_
