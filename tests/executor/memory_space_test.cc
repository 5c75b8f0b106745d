// The spaces' host pieces (executor/memory/memory_space.h): HostTableSpace
// runs a prepared table as the copy program does, counts its waits and times
// with marks; HostMemorySpace runs programs and steps on the CPU with
// zeroed memory; RunTimer adds spans from a space's marks, read after the
// run's wait, and reports a mark that failed.
#include <cstring>
#include <numeric>
#include <vector>

#include "executor/memory/host_memory_space.h"
#include "executor/memory/host_table_space.h"
#include "executor/run/copy_program.h"
#include "executor/run/run_timer.h"
#include "executor/run/step_exec.h"
#include "gtest/gtest.h"
#include "planner/search/plan_request.h"
#include "planner/search/planner.h"
#include "tests/planner/test_util.h"

namespace reshard::executor {
namespace {

TEST(HostTableSpaceTest, RunsAPreparedTableAsTheProgram) {
  HostTableSpace space;
  CopyProgram program;
  program.fills.push_back({CopyBuffer::kOut, 0, 8});
  // Rows 1 and 2 of a 3x4 byte matrix, columns 1..2, to the output's end.
  program.copies.push_back(PackCopy({3, 4}, Box{{1, 1}, {2, 2}}, 1,
                                    CopyBuffer::kIn, CopyBuffer::kOut, 8));
  absl::StatusOr<std::unique_ptr<SpaceWork>> work =
      space.PrepareCopies(program);
  ASSERT_TRUE(work.ok()) << work.status();
  absl::StatusOr<SpaceBuffer> in = AllocateIn(space, 12);
  absl::StatusOr<SpaceBuffer> out = AllocateIn(space, 12);
  ASSERT_TRUE(in.ok() && out.ok());
  std::vector<char> source(12);
  std::iota(source.begin(), source.end(), 1);
  ASSERT_TRUE(space.Upload(in->get(), source.data(), 12).ok());
  std::memset(out->get(), 9, 12);
  ASSERT_TRUE((*work)->Run({in->get(), out->get(), nullptr, nullptr}).ok());
  ASSERT_TRUE(space.Synchronize().ok());
  std::vector<char> result(12);
  ASSERT_TRUE(space.Download(result.data(), out->get(), 12).ok());
  EXPECT_EQ(result, (std::vector<char>{0, 0, 0, 0, 0, 0, 0, 0, 6, 7, 10, 11}));
  EXPECT_EQ(space.tables_run(), 1);
  EXPECT_EQ(space.synchronizations(), 1);
}

// Host memory: zeroed allocations, the program run by the CPU, a local
// step run as ExecuteStep runs it, and nothing to wait for.
TEST(HostMemorySpaceTest, RunsProgramsAndStepsOnZeroedMemory) {
  HostMemorySpace space;
  EXPECT_EQ(space.name(), "host");
  absl::StatusOr<SpaceBuffer> in = AllocateIn(space, 12);
  absl::StatusOr<SpaceBuffer> out = AllocateIn(space, 12);
  ASSERT_TRUE(in.ok() && out.ok());
  EXPECT_EQ(std::vector<char>(out->get(), out->get() + 12),
            std::vector<char>(12, 0));
  std::vector<char> source(12);
  std::iota(source.begin(), source.end(), 1);
  ASSERT_TRUE(space.Upload(in->get(), source.data(), 12).ok());
  CopyProgram program;
  program.copies.push_back(PackCopy({3, 4}, Box{{1, 1}, {2, 2}}, 1,
                                    CopyBuffer::kIn, CopyBuffer::kOut, 8));
  absl::StatusOr<std::unique_ptr<SpaceWork>> work =
      space.PrepareCopies(program);
  ASSERT_TRUE(work.ok()) << work.status();
  ASSERT_TRUE((*work)->Run({in->get(), out->get(), nullptr, nullptr}).ok());
  EXPECT_EQ(std::vector<char>(out->get(), out->get() + 12),
            (std::vector<char>{0, 0, 0, 0, 0, 0, 0, 0, 6, 7, 10, 11}));
  // Chunking 6 halves on a 1-D mesh of 2: position 1 keeps the last 3
  // (bytes 6..11).
  const Mesh mesh = testing::MakeMesh({2});
  const Plan plan =
      *MakePlan(mesh, *ParsePlanRequest(mesh, {6}, "f16", "R", "S(0)", {}));
  ASSERT_EQ(plan.steps.size(), 1u);
  ASSERT_EQ(plan.steps[0].op, StepOp::kChunk);
  absl::StatusOr<std::unique_ptr<SpaceWork>> step =
      space.PrepareStep(CompileStep(mesh, plan.tensor, plan.steps[0], 1));
  ASSERT_TRUE(step.ok()) << step.status();
  ASSERT_TRUE((*step)->Run({in->get(), out->get(), nullptr, nullptr}).ok());
  EXPECT_EQ(std::vector<char>(out->get(), out->get() + 6),
            (std::vector<char>{7, 8, 9, 10, 11, 12}));
  EXPECT_TRUE(space.Synchronize().ok());
}

TEST(HostTableSpaceTest, MarksAreReadInOrderAndCheckedForRange) {
  HostTableSpace space;
  absl::StatusOr<int64_t> a = space.Mark(), b = space.Mark();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*b, *a + 1);
  absl::StatusOr<double> seconds = space.Between(*a, *b);
  ASSERT_TRUE(seconds.ok());
  EXPECT_GE(*seconds, 0.0);
  EXPECT_EQ(space.Between(*a, 7).status().message(),
            "host tables: marks 0 and 7 of 2");
  space.ClearMarks();
  EXPECT_EQ(space.Between(0, 1).status().code(), absl::StatusCode::kOutOfRange);
}

// A space whose marks fail (a GPU whose event could not be recorded).
class NoMarks : public HostTableSpace {
 public:
  absl::StatusOr<int64_t> Mark() override {
    return absl::InternalError("cudaEventRecord: no");
  }
};

TEST(RunTimerTest, AddsSpansAtResolveFromEitherHostSpace) {
  HostTableSpace tables;
  HostMemorySpace host;
  for (MemorySpace* s :
       {static_cast<MemorySpace*>(&host), static_cast<MemorySpace*>(&tables)}) {
    RunTimer timer(*s);
    timer.Start();
    double total = 0, part = 0;
    const int64_t start = timer.Now();
    const int64_t middle = timer.Now();
    const int64_t end = timer.Now();
    timer.Add(start, end, &total);
    timer.Add(start, middle, &part);
    timer.Add(middle, end, &part);
    EXPECT_EQ(total, 0.0);  // nothing read before Resolve
    ASSERT_TRUE(timer.Resolve().ok());
    EXPECT_GE(total, 0.0);
    EXPECT_DOUBLE_EQ(part, total);
  }
  NoMarks broken;
  RunTimer timer(broken);
  timer.Start();
  double into = 0;
  timer.Add(timer.Now(), timer.Now(), &into);
  EXPECT_EQ(timer.Resolve().message(), "cudaEventRecord: no");
}

}  // namespace
}  // namespace reshard::executor
