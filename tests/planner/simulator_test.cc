// The reference simulator is the judge of every planner, so it must reject
// wrong plans: these tests corrupt valid plans (wrong group order, dropped
// steps, wrong reduction, wrong divisor) and check that CheckPlan or the raw
// data run catches each, and that uneven merged collectives — which PyTorch
// refuses or corrupts — are exact here.
#include "reference/simulator.h"

#include "gtest/gtest.h"
#include "planner/core/state_text.h"
#include "planner/search/planner.h"
#include "reference/plan_check.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

DistState State(const Mesh& mesh, int rank, const std::string& text) {
  return *ParseDistState(text, mesh.ndim(), rank, "state");
}

Plan PlanFor(const Mesh& mesh, std::vector<int64_t> shape,
             const std::string& src, const std::string& dst,
             bool merge = false) {
  PlanOptions options;
  options.merge = merge;
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, std::move(shape), "f32", src, dst, options);
  EXPECT_TRUE(request.ok()) << request.status();
  absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

// A plan from explicit (to, group) steps, built with MakeStep.
Plan HandPlan(const Mesh& mesh, std::vector<int64_t> shape,
              const DistState& src,
              const std::vector<std::pair<DistState, Group>>& path) {
  Plan plan;
  plan.tensor = *TensorSpec::Create(std::move(shape), DType::kFloat32);
  plan.src = src;
  DistState at = src;
  for (const auto& [to, group] : path) {
    absl::StatusOr<Step> step = MakeStep(mesh, at, to, group);
    EXPECT_TRUE(step.ok()) << step.status();
    plan.steps.push_back(*step);
    at = to;
  }
  plan.dst = at;
  return plan;
}

TEST(SimulatorTest, ValidPlanPasses) {
  const Mesh mesh = MakeMesh({2, 3});
  const Plan plan = PlanFor(mesh, {7, 5}, "S(0),S(1)", "S(1),S(0)");
  EXPECT_TRUE(CheckPlan(mesh, plan).ok()) << CheckPlan(mesh, plan);
}

TEST(SimulatorTest, DroppedStepIsCaught) {
  const Mesh mesh = MakeMesh({2, 2});
  Plan plan = PlanFor(mesh, {8, 8}, "P(sum),P(sum)", "R,R");
  ASSERT_EQ(plan.steps.size(), 2u);
  plan.steps.pop_back();
  const absl::Status s = CheckPlan(mesh, plan);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("not equivalent to R,R"), std::string::npos) << s;
}

TEST(SimulatorTest, StepThatDoesNotChainIsCaught) {
  const Mesh mesh = MakeMesh({2, 2});
  Plan plan = PlanFor(mesh, {8, 8}, "P(sum),P(sum)", "R,R");
  std::swap(plan.steps[0], plan.steps[1]);
  const absl::Status s = CheckPlan(mesh, plan);
  EXPECT_NE(s.message().find("step 0 starts from"), std::string::npos) << s;
}

TEST(SimulatorTest, WrongReduceOpIsCaught) {
  const Mesh mesh = MakeMesh({2, 2});
  Plan plan = PlanFor(mesh, {8, 8}, "P(sum),R", "R,R");
  plan.steps[0].reduce_op = ReduceOp::kMax;
  const absl::Status s = CheckPlan(mesh, plan);
  EXPECT_NE(s.message().find("disagrees with its inferred form"),
            std::string::npos)
      << s;
}

TEST(SimulatorTest, WrongAvgDivisorIsCaughtByTheDataRun) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const DistState src = State(mesh, 2, "P(sum),P(avg)");
  const DistState rr = State(mesh, 2, "R,R");
  Plan plan = HandPlan(mesh, {3, 5}, src, {{rr, {0, 1}}});
  ASSERT_EQ(plan.steps[0].avg_divisor, 4);
  EXPECT_TRUE(CheckPlan(mesh, plan).ok()) << CheckPlan(mesh, plan);
  // Run the corrupted step directly: the data no longer reduces to the value.
  std::vector<LocalTensor<int64_t>> buffers(8);
  for (int64_t p = 0; p < 8; ++p)
    buffers[p] = {{3, 5}, std::vector<int64_t>(15, 4)};
  Step wrong = plan.steps[0];
  wrong.avg_divisor = 1;
  ASSERT_TRUE(RunStep(mesh, plan.tensor.shape(), wrong, buffers).ok());
  EXPECT_EQ(buffers[0].data[0], 32);  // sum over 8 ranks, not divided by 4
  plan.steps[0] = wrong;
  EXPECT_FALSE(CheckPlan(mesh, plan).ok());
}

TEST(SimulatorTest, GatherInTheWrongGroupOrderMovesTheWrongRows) {
  // S(0),S(0) on 2x2: rank (a,b) holds rows chunked by A then B. Gathering
  // over (B,A) concatenates blocks in the wrong order.
  const Mesh mesh = MakeMesh({2, 2});
  const DistState src = State(mesh, 1, "S(0),S(0)");
  std::vector<LocalTensor<int64_t>> buffers(4);
  for (int64_t p = 0; p < 4; ++p) {
    buffers[p] = {{2}, {2 * p, 2 * p + 1}};
  }
  Step step;
  step.op = StepOp::kAllGather;
  step.src_tensor_dim = 0;
  step.from = src;
  step.to = DistState::Replicated(2);
  step.group = {0, 1};
  std::vector<LocalTensor<int64_t>> right = buffers;
  ASSERT_TRUE(RunStep(mesh, {8}, step, right).ok());
  EXPECT_EQ(right[3].data, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  step.group = {1, 0};
  std::vector<LocalTensor<int64_t>> wrong = buffers;
  ASSERT_TRUE(RunStep(mesh, {8}, step, wrong).ok());
  EXPECT_NE(wrong[3].data, right[3].data);
  // And MakeStep refuses that order outright.
  EXPECT_FALSE(MakeStep(mesh, src, DistState::Replicated(2), {1, 0}).ok());
}

TEST(SimulatorTest, BufferOfTheWrongShapeIsRejected) {
  const Mesh mesh = MakeMesh({2});
  const Plan plan = PlanFor(mesh, {5}, "S(0)", "R");
  std::vector<LocalTensor<int64_t>> buffers(
      2, LocalTensor<int64_t>{{5}, std::vector<int64_t>(5)});
  const absl::Status s = RunStep(mesh, {5}, plan.steps[0], buffers);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("does not match S(0)"), std::string::npos) << s;
}

// PyTorch #194457: a flattened all_gather of (5,3) [S0,S0] on 2x2 loses a
// row. Reshard's padded blocks make merged steps exact on uneven shapes.
TEST(SimulatorTest, MergedStepsAreExactOnUnevenShapes) {
  const Mesh mesh = MakeMesh({2, 3}, {{"A", "B"}});
  const DistState s00 = State(mesh, 2, "S(0),S(0)");
  const DistState rr = State(mesh, 2, "R,R");
  const DistState pp = State(mesh, 2, "P(sum),P(avg)");
  EXPECT_TRUE(
      CheckPlan(mesh, HandPlan(mesh, {5, 3}, s00, {{rr, {0, 1}}})).ok());
  EXPECT_TRUE(
      CheckPlan(mesh, HandPlan(mesh, {4, 1}, pp, {{s00, {0, 1}}})).ok());
  const DistState s10 = State(mesh, 2, "S(1),S(1)");
  EXPECT_TRUE(
      CheckPlan(mesh, HandPlan(mesh, {5, 7}, s00, {{s10, {0, 1}}})).ok());
}

TEST(SimulatorTest, PartialDestinationsReduceToTheGlobalValue) {
  const Mesh mesh = MakeMesh({3, 2});
  for (const char* dst :
       {"P(sum),R", "R,P(avg)", "P(max),S(0)", "S(1),P(min)"}) {
    SCOPED_TRACE(dst);
    const Plan plan = PlanFor(mesh, {5, 4}, "R,R", dst);
    EXPECT_TRUE(CheckPlan(mesh, plan).ok()) << CheckPlan(mesh, plan);
  }
}

TEST(SimulatorTest, ShardToPartialKeepsTheChunkAtItsOffset) {
  const Mesh mesh = MakeMesh({3});
  const DistState s0 = State(mesh, 1, "S(0)");
  const DistState p = State(mesh, 1, "P(sum)");
  EXPECT_TRUE(CheckPlan(mesh, HandPlan(mesh, {7}, s0, {{p, {0}}})).ok());
}

}  // namespace
}  // namespace reshard
