// Plan's closed sets have one text form each: every planner kind and
// warning code prints as its documented name and parses back; other names
// are refused. And the step counters of a Plan.
#include "planner/core/plan.h"

#include "gtest/gtest.h"
#include "planner/search/planner.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

TEST(PlanTest, PlannerNamesRoundTrip) {
  for (PlannerKind kind : {PlannerKind::kOptimal, PlannerKind::kTorchGreedy,
                           PlannerKind::kTorchGraph}) {
    EXPECT_EQ(ParsePlanner(PlannerName(kind)), kind);
  }
  EXPECT_EQ(PlannerName(PlannerKind::kTorchGraph), "torch_graph");
  EXPECT_EQ(ParsePlanner("Optimal"), std::nullopt);
}

TEST(PlanTest, WarningCodeNamesRoundTrip) {
  const std::pair<WarningCode, const char*> codes[] = {
      {WarningCode::kMissingFlattenedGroup, "missing_flattened_group"},
      {WarningCode::kSearchBudgetExceeded, "search_budget_exceeded"},
      {WarningCode::kNonAscendingMergeRefused, "non_ascending_merge_refused"},
      {WarningCode::kUnevenMergeRefused, "uneven_merge_refused"},
  };
  for (const auto& [code, name] : codes) {
    EXPECT_EQ(WarningCodeName(code), name);
    EXPECT_EQ(ParseWarningCode(name), code);
  }
  EXPECT_EQ(ParseWarningCode("search_budget"), std::nullopt);
}

TEST(PlanTest, CountsSteps) {
  const Mesh mesh = testing::MakeMesh({2, 1});
  PlanOptions options;
  options.planner = PlannerKind::kTorchGreedy;
  const PlanRequest request =
      *ParsePlanRequest(mesh, {8}, "f32", "P(sum),S(0)", "R,R", options);
  const Plan plan = MakePlan(mesh, request).value();
  EXPECT_EQ(plan.planner, PlannerKind::kTorchGreedy);
  EXPECT_EQ(plan.cost_model, CostModelKind::kAlphaBeta);
  ASSERT_EQ(plan.steps.size(), 2u) << testing::Ops(mesh, plan);
  EXPECT_EQ(plan.CountOp(StepOp::kAllReduce), 1);
  EXPECT_EQ(plan.CountOp(StepOp::kAllGather), 1);
  // PyTorch keeps the all_gather on the size-1 dim; it moves nothing.
  EXPECT_EQ(plan.CommunicatingSteps(mesh), 1);
}

}  // namespace
}  // namespace reshard
