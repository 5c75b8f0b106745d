// A bucket's data movement as copy programs (docs/DESIGN.md §8): member k
// packs its send boxes from its tensor (kIn) into its place in every packed
// block of the wire (kWireIn), and unpacks its output (kOut) from the
// collective's result (kWireOut; kWireIn for all_reduce, which runs in
// place). The bucket's wire format is planner/batch/bucket_layout.h's. Every
// MemorySpace runs them: host memory by RunOnHost, a TableSpace as device
// tables.
#ifndef RESHARD_EXECUTOR_RUN_BUCKET_COPIES_H_
#define RESHARD_EXECUTOR_RUN_BUCKET_COPIES_H_

#include <cstddef>

#include "executor/run/copy_program.h"
#include "planner/batch/bucket_layout.h"
#include "planner/core/step.h"

namespace reshard::executor {

// Member k's packing into the wire.
CopyProgram BucketPackProgram(const BucketLayout& layout, StepOp op, size_t k);
// Member k's output from the collective's result.
CopyProgram BucketUnpackProgram(const BucketLayout& layout, StepOp op,
                                size_t k);
// The buffer holding a bucket's collective result.
CopyBuffer BucketResult(StepOp op);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_BUCKET_COPIES_H_
