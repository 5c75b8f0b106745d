// Running a local step (chunk, partition, shard_to_partial) on one rank's
// buffer, by StepLayout's local-step contract (planner/core/step_layout.h): the
// output is zeros except at most one box copied from the input. Shared by
// PlanRunner and BatchRunner, which both run local steps between
// collectives.
#ifndef RESHARD_EXECUTOR_RUN_LOCAL_STEP_H_
#define RESHARD_EXECUTOR_RUN_LOCAL_STEP_H_

#include <cstdint>

#include "planner/core/step_layout.h"

namespace reshard::executor {

// Writes the step's output (`layout.out_shape`, `itemsize` bytes per
// element) into `out` from its input `in`; they must not overlap.
void RunLocalStep(const StepLayout& layout, int64_t itemsize, const char* in,
                  char* out);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_LOCAL_STEP_H_
