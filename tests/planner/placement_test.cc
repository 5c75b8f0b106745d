// Proves Placement's text forms (ToString, PyTorch reprs), ReduceOp names
// and which Partial ops may coexist.
#include "planner/core/placement.h"

#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(PlacementTest, PlacementBasics) {
  EXPECT_EQ(Placement::Shard(3).ToString(), "S(3)");
  EXPECT_EQ(Placement::Replicate().ToString(), "R");
  EXPECT_EQ(Placement::Partial().ToString(), "P(sum)");
  EXPECT_EQ(Placement::Partial(ReduceOp::kMin).ToString(), "P(min)");
  EXPECT_EQ(Placement::Shard(0).ToRepr(), "Shard(dim=0)");
  EXPECT_EQ(Placement::Replicate().ToRepr(), "Replicate()");
  EXPECT_EQ(Placement::Partial(ReduceOp::kAvg).ToRepr(), "Partial(avg)");
  EXPECT_TRUE(ParseReduceOp("max") == ReduceOp::kMax);
  EXPECT_TRUE(ParseReduceOp("avg") == ReduceOp::kAvg);
  EXPECT_FALSE(ParseReduceOp("prod").has_value());
  EXPECT_FALSE(ParseReduceOp("SUM").has_value());
  EXPECT_TRUE(PartialOpsCompatible(ReduceOp::kSum, ReduceOp::kAvg));
  EXPECT_TRUE(PartialOpsCompatible(ReduceOp::kMax, ReduceOp::kMax));
  EXPECT_FALSE(PartialOpsCompatible(ReduceOp::kSum, ReduceOp::kMax));
  EXPECT_FALSE(PartialOpsCompatible(ReduceOp::kMin, ReduceOp::kMax));
}

TEST(PlacementTest, NormalizesNegativeShardDims) {
  EXPECT_EQ(NormalizeShardDim(-1, 3, "src[0]").value(), 2);
  EXPECT_EQ(NormalizeShardDim(-3, 3, "src[0]").value(), 0);
  EXPECT_EQ(NormalizeShardDim(2, 3, "src[0]").value(), 2);
  EXPECT_EQ(NormalizeShardDim(3, 3, "src[1]").status().message(),
            "src[1]: shard dim 3 out of range for a tensor of rank 3");
  EXPECT_EQ(NormalizeShardDim(-4, 3, "x").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace reshard
