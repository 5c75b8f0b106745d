// Calibration's plans: one collective of the asked op on the asked group,
// moving about the asked bytes, and correct (the simulator checks each).
#include "planner/cost/calibration_plans.h"

#include "gtest/gtest.h"
#include "reference/plan_check.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

TEST(CalibrationPlansTest, GroupsAreTheDimsThenTheFlattenedGroups) {
  const Mesh mesh = MakeMesh({2, 1, 4}, {{"A", "C"}, {"B", "C"}});
  const std::vector<Group> groups = CalibrationGroups(mesh);
  // B has size 1: no group of its own, and (B,C) is C's group.
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], Group({0}));
  EXPECT_EQ(groups[1], Group({2}));
  EXPECT_EQ(groups[2], Group({0, 2}));
}

TEST(CalibrationPlansTest, SizesGrowFourfoldWithinTheBounds) {
  EXPECT_EQ(*CalibrationSizes(4096, 65536),
            std::vector<int64_t>({4096, 16384, 65536}));
  EXPECT_EQ(*CalibrationSizes(4096, 100000),
            std::vector<int64_t>({4096, 16384, 65536}));
  EXPECT_EQ(CalibrationSizes(4096, 1024).status().message(),
            "sizes: need 4 <= min_bytes <= max_bytes, got 4096 and 1024");
  EXPECT_EQ(CalibrationSizes(2, 1024).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CalibrationPlansTest, EveryPlanIsOneCheckedCollectiveOfAboutTheBytes) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  uint64_t seed = 1;
  for (const Group& group : CalibrationGroups(mesh)) {
    for (StepOp op : kCalibratedOps) {
      for (int64_t bytes : {int64_t{4096}, int64_t{1} << 20}) {
        absl::StatusOr<Plan> plan = CalibrationPlan(mesh, group, op, bytes);
        ASSERT_TRUE(plan.ok()) << plan.status();
        ASSERT_EQ(plan->steps.size(), 1u);
        const Step& step = plan->steps[0];
        EXPECT_EQ(step.op, op);
        EXPECT_EQ(step.group, group);
        EXPECT_GE(step.bytes, bytes / 2) << StepOpName(op);
        EXPECT_LE(step.bytes, bytes) << StepOpName(op);
        EXPECT_GT(plan->total_time_us, 0);
        EXPECT_TRUE(CheckPlan(mesh, *plan, seed++).ok());
      }
    }
  }
}

// A strided gather moves what the contiguous one moves and unpacks its
// whole output; the contiguous collectives pack nothing but all_to_all's
// input (its blocks are column strips).
TEST(CalibrationPlansTest, AStridedGatherUnpacksWhatItGathers) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  uint64_t seed = 1;
  for (const Group& group : CalibrationGroups(mesh)) {
    const int64_t bytes = int64_t{1} << 20;
    absl::StatusOr<Plan> strided = StridedGatherPlan(mesh, group, bytes);
    ASSERT_TRUE(strided.ok()) << strided.status();
    const Plan plain = *CalibrationPlan(mesh, group, StepOp::kAllGather, bytes);
    ASSERT_EQ(strided->steps.size(), 1u);
    EXPECT_EQ(strided->steps[0].op, StepOp::kAllGather);
    EXPECT_EQ(strided->steps[0].src_tensor_dim, 1);
    EXPECT_EQ(strided->steps[0].bytes, plain.steps[0].bytes);
    EXPECT_EQ(PackedBytes(mesh, *strided), strided->steps[0].bytes);
    // Priced alike: a mesh without a copy rate does not price packing.
    EXPECT_DOUBLE_EQ(strided->total_time_us, plain.total_time_us);
    EXPECT_EQ(PackedBytes(mesh, plain), 0);
    EXPECT_EQ(PackedBytes(mesh, *CalibrationPlan(mesh, group,
                                                 StepOp::kAllReduce, bytes)),
              0);
    EXPECT_GT(PackedBytes(mesh, *CalibrationPlan(mesh, group, StepOp::kAllToAll,
                                                 bytes)),
              0);
    EXPECT_TRUE(CheckPlan(mesh, *strided, seed++).ok());
  }
}

TEST(CalibrationPlansTest, RefusesALocalOp) {
  const Mesh mesh = MakeMesh({2, 4});
  EXPECT_EQ(CalibrationPlan(mesh, {0}, StepOp::kChunk, 4096).status().message(),
            "op: not a collective");
}

}  // namespace
}  // namespace reshard
