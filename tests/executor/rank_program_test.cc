// Rank programs (executor/run/rank_program.h), what outside interpreters
// run: on 2,000 random plans (every planner, uneven shapes, shuffled rank
// maps, every dtype) and every rank, the steps chain (each input is the
// previous output), every copy, fill and collective block lies inside its
// buffer, a group's members hold this rank at its index, and reductions
// carry the executor's divisor. Their data is judged elsewhere: the Python
// package runs them on Gloo ranks against the executor's checksums
// (tests/python/test_torch_run_plan.py).
#include "executor/run/rank_program.h"

#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/run/rank_program_json.h"
#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/core/state_text.h"
#include "tests/executor/executor_cases.h"

namespace reshard::executor {
namespace {

int64_t BufferBytes(const ProgramStep& s, CopyBuffer b, int64_t itemsize) {
  switch (b) {
    case CopyBuffer::kIn:
      return Numel(s.in_shape) * itemsize;
    case CopyBuffer::kOut:
      return Numel(s.out_shape) * itemsize;
    case CopyBuffer::kWireIn:
      return s.wire.in;
    default:
      return s.wire.out;
  }
}

// The last byte `c` touches on one side, plus one.
int64_t End(int64_t offset, int64_t run, const std::vector<int64_t>& counts,
            const std::vector<int64_t>& strides) {
  int64_t end = offset + run;
  for (size_t k = 0; k < counts.size(); ++k)
    end += (counts[k] - 1) * strides[k];
  return end;
}

void ExpectInside(const ProgramStep& s, const CopyProgram& p, int64_t itemsize,
                  const std::string& where) {
  for (const ZeroFill& f : p.fills) {
    EXPECT_LE(f.offset + f.bytes, BufferBytes(s, f.buffer, itemsize)) << where;
    EXPECT_NE(f.buffer, CopyBuffer::kIn) << where;
  }
  for (const StridedCopy& c : p.copies) {
    if (c.run_bytes == 0) continue;
    EXPECT_LE(End(c.from_offset, c.run_bytes, c.counts, c.from_strides),
              BufferBytes(s, c.from, itemsize))
        << where;
    EXPECT_LE(End(c.to_offset, c.run_bytes, c.counts, c.to_strides),
              BufferBytes(s, c.to, itemsize))
        << where;
    EXPECT_NE(c.to, CopyBuffer::kIn) << where;
  }
}

void ExpectCollectiveInside(const ProgramStep& s, int64_t itemsize,
                            const std::string& where) {
  const int64_t block = s.block_numel * itemsize;
  const int64_t n = static_cast<int64_t>(s.members.size());
  const bool gathers = s.op == StepOp::kAllGather;
  const int64_t sent =
      gathers || s.op == StepOp::kAllReduce ? block : n * block;
  const int64_t received =
      s.op == StepOp::kAllGather || s.op == StepOp::kAllToAll ? n * block
                                                              : block;
  const StepCopies& c = s.copies;
  EXPECT_GT(block, 0) << where;
  EXPECT_LE(c.io.send_offset + sent, BufferBytes(s, c.io.send, itemsize))
      << where;
  EXPECT_LE(received, BufferBytes(s, c.io.recv, itemsize)) << where;
}

void ExpectStepOk(const Mesh& mesh, const Plan& plan, const ProgramStep& s,
                  int64_t position, const std::string& where) {
  const Step& step = plan.steps[s.plan_step];
  EXPECT_EQ(s.op, step.op) << where;
  EXPECT_EQ(s.members, mesh.GroupPositions(position, step.group)) << where;
  ASSERT_GT(s.members.size(), 1u) << where;  // a group of one is left out
  EXPECT_EQ(s.members[s.index], position) << where;
  const int64_t itemsize = plan.tensor.itemsize();
  ExpectInside(s, s.copies.before, itemsize, where + " before");
  ExpectInside(s, s.copies.after, itemsize, where + " after");
  if (s.copies.collective) ExpectCollectiveInside(s, itemsize, where);
  const bool reduces =
      step.op == StepOp::kAllReduce || step.op == StepOp::kReduceScatter;
  if (reduces && step.reduce_op == ReduceOp::kAvg) {
    EXPECT_EQ(s.reduce_op, ReduceOp::kSum) << where;
    EXPECT_EQ(s.divisor,
              static_cast<int64_t>(s.members.size()) * step.avg_divisor)
        << where;
  } else if (reduces) {
    EXPECT_EQ(s.divisor, step.avg_divisor) << where;
  }
}

TEST(RankProgramTest, StepsChainAndStayInsideTheirBuffers) {
  std::mt19937_64 rng(20261207);
  int steps = 0, collectives = 0;
  for (int i = 0; i < 2000; ++i) {
    const testing::ExecCase c = testing::RandomExecCase(rng);
    for (int64_t p = 0; p < c.mesh.world_size(); ++p) {
      absl::StatusOr<RankProgram> program =
          CompileRankProgram(c.mesh, c.plan, p);
      ASSERT_TRUE(program.ok()) << program.status();
      const std::string where = absl::StrCat("case ", i, " position ", p);
      std::vector<int64_t> shape = program->in_shape;
      EXPECT_EQ(shape,
                LocalBox(c.mesh, c.plan.src, c.plan.tensor.shape(), p).extent);
      int last = -1;
      for (const ProgramStep& s : program->steps) {
        EXPECT_GT(s.plan_step, last) << where;
        last = s.plan_step;
        EXPECT_EQ(s.in_shape, shape) << where;
        shape = s.out_shape;
        ExpectStepOk(c.mesh, c.plan, s, p, where);
        steps++;
        collectives += s.copies.collective;
      }
      EXPECT_EQ(shape, program->out_shape) << where;
    }
  }
  EXPECT_GT(steps, 5000);
  EXPECT_GT(collectives, 2000);
}

TEST(RankProgramTest, RefusesPositionsOutsideTheMesh) {
  std::mt19937_64 rng(7);
  const testing::ExecCase c = testing::RandomExecCase(rng);
  for (int64_t p : {int64_t{-1}, c.mesh.world_size()}) {
    absl::StatusOr<RankProgram> program = CompileRankProgram(c.mesh, c.plan, p);
    EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(program.status().message(),
              absl::StrCat("position: ", p, " is not in a mesh of ",
                           c.mesh.world_size(), " ranks"));
  }
}

TEST(RankProgramTest, EveryRanksProgramsAreBounded) {
  MeshSpec spec{.shape = {2048}, .dim_names = {"A"}};
  const Mesh mesh = *Mesh::Create(spec);
  PlanRequest request;
  request.tensor = *TensorSpec::Create({4096}, DType::kFloat32);
  request.src = *ParseDistState("S(0)", 1, 1, "src");
  request.dst = *ParseDistState("R", 1, 1, "dst");
  const Plan plan = *MakePlan(mesh, request);
  absl::StatusOr<std::string> all = ProgramsJson(mesh, plan, std::nullopt);
  EXPECT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(all.status().message(),
            "programs: a mesh of 2048 ranks has more than 1024 programs; ask "
            "for one rank's");
  absl::StatusOr<std::string> one = ProgramsJson(mesh, plan, 2047);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->rfind("[{\"position\":2047,", 0), 0u) << *one;
}

}  // namespace
}  // namespace reshard::executor
