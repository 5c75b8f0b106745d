#include "executor/run/rank_program.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/run/communicator.h"
#include "executor/run/step_exec.h"
#include "planner/core/local_layout.h"
#include "planner/core/plan_structure.h"

namespace reshard::executor {
namespace {

ProgramStep ProgramStepOf(const Mesh& mesh, const CompiledStep& c,
                          int64_t position) {
  ProgramStep p;
  p.op = c.step.op;
  p.group = c.step.group;
  p.members = mesh.GroupPositions(position, c.step.group);
  p.index = c.layout.index;
  p.in_shape = c.layout.in_shape;
  p.out_shape = c.layout.out_shape;
  p.block_numel = c.block;
  p.wire = WireOf(c);
  if (IsCollective(c.step.op) && UsesReduceOp(c.step.op)) {
    const Reduction r{c.step.reduce_op, c.step.avg_divisor};
    p.reduce_op = r.op == ReduceOp::kAvg ? ReduceOp::kSum : r.op;
    p.divisor = DivisorOf(r, c.layout.group_size);
  }
  p.copies = CopiesOf(c);
  return p;
}

}  // namespace

absl::StatusOr<RankProgram> CompileRankProgram(const Mesh& mesh,
                                               const Plan& plan,
                                               int64_t position) {
  absl::Status s = CheckPlanStructure(mesh, plan);
  if (!s.ok()) return s;
  if (position < 0 || position >= mesh.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("position: ", position, " is not in a mesh of ",
                     mesh.world_size(), " ranks"));
  }
  RankProgram program;
  program.position = position;
  program.dtype = plan.tensor.dtype();
  const auto& shape = plan.tensor.shape();
  program.in_shape = LocalBox(mesh, plan.src, shape, position).extent;
  program.out_shape = LocalBox(mesh, plan.dst, shape, position).extent;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const CompiledStep c =
        CompileStep(mesh, plan.tensor, plan.steps[i], position);
    // A group of one moves no data: the tensor stays as it is (as the
    // runner skips it).
    if (c.skip) continue;
    program.steps.push_back(ProgramStepOf(mesh, c, position));
    program.steps.back().plan_step = static_cast<int>(i);
  }
  return program;
}

}  // namespace reshard::executor
