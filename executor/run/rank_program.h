// A plan compiled for one rank, as data that a host outside this executor
// interprets with its own collectives and copies (the Python package runs it
// with torch ops, python/reshard/torch/run_plan.py): per step, the collective
// and its group, the buffers' sizes, and the copy programs around the
// collective, exactly the ones this executor's host and device paths run
// (copy_program.h). The interpreter derives nothing: boxes, padding, trims
// and zero fills are all in the copies.
#ifndef RESHARD_EXECUTOR_RUN_RANK_PROGRAM_H_
#define RESHARD_EXECUTOR_RUN_RANK_PROGRAM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/run/copy_program.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/core/step_memory.h"

namespace reshard::executor {

struct ProgramStep {
  int plan_step = 0;  // its index among the plan's steps
  StepOp op = StepOp::kAllGather;
  Group group;                     // mesh dims, in the group's order
  std::vector<int64_t> members;    // mesh positions of the group, in order
  int64_t index = 0;               // this rank's place in `members`
  std::vector<int64_t> in_shape;   // the step's input tensor
  std::vector<int64_t> out_shape;  // its output tensor
  int64_t block_numel = 0;         // collectives: each member's padded block
  WireUse wire;                    // bytes of the two packed wire buffers
  // Reductions: the collective's op (avg reduces as a sum) and the divisor
  // every reduced element is divided by afterwards (1: none).
  ReduceOp reduce_op = ReduceOp::kSum;
  int64_t divisor = 1;
  StepCopies copies;  // `copies.collective` false: no collective is called
};

struct RankProgram {
  int64_t position = 0;  // the rank's row-major place in the mesh
  DType dtype = DType::kFloat32;
  std::vector<int64_t> in_shape;   // this rank's tensor under the plan's src
  std::vector<int64_t> out_shape;  // under its dst
  // The plan's steps but those on a group of one, which move no data.
  std::vector<ProgramStep> steps;
};

// `plan` compiled for the rank at mesh `position` (positions, not global
// ranks, so that a host maps them to its own ranks). INVALID_ARGUMENT when
// the plan is malformed (CheckPlanStructure) or `position` is out of range.
absl::StatusOr<RankProgram> CompileRankProgram(const Mesh& mesh,
                                               const Plan& plan,
                                               int64_t position);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_RANK_PROGRAM_H_
