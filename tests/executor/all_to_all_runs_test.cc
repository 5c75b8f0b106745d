// all_to_all blocks that travel as runs (docs/DESIGN.md §6.1): long runs of
// the input sent in place, short ones packed, on real Gloo ranks (threads
// meeting in a MemoryStore), every result judged by the data rule. The
// cases are sized so that the in-place path runs (checked first).
#include <numeric>
#include <thread>
#include <vector>

#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/judge/harness.h"
#include "executor/run/step_exec.h"
#include "executor/stores/memory_store.h"
#include "gtest/gtest.h"
#include "planner/search/planner.h"

namespace reshard {
namespace {

struct Case {
  int ranks;
  std::vector<int64_t> shape;
  const char* src;
  const char* dst;
};

// Whether rank 0 sends some block of `plan`'s all_to_all in place.
bool SendsInPlace(const Mesh& mesh, const Plan& plan) {
  for (const Step& step : plan.steps) {
    if (step.op != StepOp::kAllToAll) continue;
    const executor::CompiledStep c =
        executor::CompileStep(mesh, plan.tensor, step, 0);
    for (size_t j = 0; j < c.send_runs.size(); ++j) {
      if (!c.send_packed[j] && !c.direct_send) return true;
    }
  }
  return false;
}

class AllToAllRunsTest : public testing::TestWithParam<Case> {};

TEST_P(AllToAllRunsTest, EveryRankValidates) {
  const Case& c = GetParam();
  const Mesh mesh = *Mesh::Create(MeshSpec{{c.ranks}, {"A"}});
  absl::StatusOr<Plan> plan =
      MakePlan(mesh, *ParsePlanRequest(mesh, c.shape, "f32", c.src, c.dst, {}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(SendsInPlace(mesh, *plan));
  const executor::BatchWork work = executor::BatchWork::OfPlan(mesh, *plan);
  auto store = std::make_shared<executor::MemoryStore>();
  std::vector<executor::RankReport> reports(c.ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < c.ranks; ++r) {
    threads.emplace_back([&, r] {
      executor::GlooOptions options;
      options.timeout = std::chrono::seconds(30);
      executor::GlooCommunicatorProvider provider(store, "runs", r, options);
      executor::HarnessOptions harness;
      harness.iters = 2;
      reports[r] = executor::RunGenerated(mesh, work, r, provider, {}, harness);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const executor::RankReport& report : reports) {
    EXPECT_TRUE(report.status.ok()) << report.status;
    EXPECT_EQ(report.WhyNotValidated(), std::nullopt)
        << "rank " << report.rank << ": " << *report.WhyNotValidated();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Runs, AllToAllRunsTest,
    testing::Values(
        // Rows of 256 KiB: two runs per block, received in place.
        Case{2, {4, 1 << 17}, "S(0)", "S(1)"},
        // Uneven: padded blocks, runs of 65,539 floats.
        Case{3, {7, 3 * 65539 + 2}, "S(0)", "S(1)"},
        // Received into the wire and unpacked.
        Case{2, {2, 4, 1 << 17}, "S(1)", "S(2)"}));

}  // namespace
}  // namespace reshard
