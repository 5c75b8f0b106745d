// Apply and MakeStep against every rule and refusal of docs/DESIGN.md §2.3: the
// source kind each op needs, the stack discipline of shard orders (only the
// last mesh dims of an order are gathered or moved, in the group's order;
// size-1 mesh dims are exempt), targets appended in the group's order, the
// allowed Partial mixes, the avg divisor of {sum, avg} reductions, and the
// op inferred from a placement pair.
#include "planner/core/step.h"

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "planner/core/state_text.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

DistState State(const Mesh& mesh, const std::string& text) {
  return ParseDistState(text, mesh.ndim(), 3, "state").value();
}

Transition Make(StepOp op, Group group, std::optional<int> a = std::nullopt,
                std::optional<int> b = std::nullopt,
                ReduceOp target = ReduceOp::kSum) {
  return Transition{op, std::move(group), a, b, target};
}

// Applies `t` to `from` and returns the list form of the result, or the
// error message.
std::string ApplyText(const Mesh& mesh, const std::string& from,
                      const Transition& t) {
  absl::StatusOr<DistState> to = Apply(mesh, State(mesh, from), t);
  if (!to.ok()) return std::string(to.status().message());
  return to->ToString();
}

void ExpectRefused(const Mesh& mesh, const std::string& from,
                   const Transition& t, const std::string& why) {
  absl::StatusOr<DistState> to = Apply(mesh, State(mesh, from), t);
  ASSERT_FALSE(to.ok()) << from << " -> " << to->ToString();
  EXPECT_EQ(to.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(to.status().message().find(why), std::string::npos)
      << to.status().message();
}

const Mesh& Mesh222() {
  static const Mesh* mesh = new Mesh(MakeMesh({2, 2, 2}));
  return *mesh;
}

TEST(StepTest, AllGatherPopsTheSuffixOfTheOrder) {
  const Mesh& mesh = Mesh222();
  EXPECT_EQ(ApplyText(mesh, "S(0),R,R", Make(StepOp::kAllGather, {0}, 0)),
            "R,R,R");
  // Order (1, 0): mesh dim 0 is the last split, then mesh dim 1.
  EXPECT_EQ(
      ApplyText(mesh, "S(0)[1]S(0)[0]R", Make(StepOp::kAllGather, {0}, 0)),
      "R,S(0),R");
  EXPECT_EQ(
      ApplyText(mesh, "S(0)[1]S(0)[0]R", Make(StepOp::kAllGather, {1, 0}, 0)),
      "R,R,R");
  // The rest of the order is renumbered.
  EXPECT_EQ(
      ApplyText(mesh, "S(0),S(0),S(0)", Make(StepOp::kAllGather, {1, 2}, 0)),
      "S(0),R,R");
}

TEST(StepTest, AllGatherRefusesWhatIsNotTheSuffix) {
  const Mesh& mesh = Mesh222();
  ExpectRefused(mesh, "S(0),S(0),R", Make(StepOp::kAllGather, {0}, 0),
                "the group must be the last mesh dims of S(0)'s shard order");
  // The suffix in the wrong order.
  ExpectRefused(mesh, "S(0),S(0),R", Make(StepOp::kAllGather, {1, 0}, 0),
                "the group must be the last mesh dims");
  ExpectRefused(mesh, "S(1),R,R", Make(StepOp::kAllGather, {0}, 0),
                "mesh dim 0 holds S(1)");
  ExpectRefused(mesh, "R,R,R", Make(StepOp::kAllGather, {0}, 0),
                "mesh dim 0 holds R");
  ExpectRefused(mesh, "S(0),R,R", Make(StepOp::kAllGather, {0}),
                "mesh dim 0 holds S(0)");  // no source tensor dim
}

TEST(StepTest, SizeOneDimsAreExemptFromTheStackDiscipline) {
  const Mesh mesh = MakeMesh({2, 1, 2});
  // Mesh dim 1 (size 1) is the last split of S(0), yet mesh dim 0 may go.
  EXPECT_EQ(ApplyText(mesh, "S(0),S(0),R", Make(StepOp::kAllGather, {0}, 0)),
            "R,S(0),R");
  EXPECT_EQ(ApplyText(mesh, "S(0),S(0),R", Make(StepOp::kAllToAll, {0}, 0, 1)),
            "S(1),S(0),R");
  ExpectRefused(mesh, "S(0),R,S(0)", Make(StepOp::kAllGather, {0}, 0),
                "the group must be the last mesh dims");
}

TEST(StepTest, AllReduceNeedsCompatiblePartials) {
  const Mesh& mesh = Mesh222();
  EXPECT_EQ(ApplyText(mesh, "P(max),R,P(max)", Make(StepOp::kAllReduce, {0})),
            "R,R,P(max)");
  EXPECT_EQ(
      ApplyText(mesh, "P(sum),P(avg),R", Make(StepOp::kAllReduce, {0, 1})),
      "R,R,R");
  // (Incompatible Partials cannot meet in one valid state.)
  ExpectRefused(mesh, "P(sum),R,R", Make(StepOp::kAllReduce, {0, 1}),
                "mesh dim 1 holds R");
  ExpectRefused(mesh, "S(0),R,R", Make(StepOp::kAllReduce, {0}),
                "mesh dim 0 holds S(0)");
}

TEST(StepTest, ReduceScatterAppendsInTheGroupsOrder) {
  const Mesh& mesh = Mesh222();
  EXPECT_EQ(ApplyText(mesh, "P(sum),R,S(1)",
                      Make(StepOp::kReduceScatter, {0}, std::nullopt, 1)),
            "S(1)[1],R,S(1)[0]");
  EXPECT_EQ(ApplyText(mesh, "P(sum),P(sum),R",
                      Make(StepOp::kReduceScatter, {1, 0}, std::nullopt, 0)),
            "S(0)[1],S(0)[0],R");
  ExpectRefused(mesh, "P(sum),R,R", Make(StepOp::kReduceScatter, {0}),
                "missing destination tensor dim");
  ExpectRefused(mesh, "R,R,R",
                Make(StepOp::kReduceScatter, {0}, std::nullopt, 0),
                "mesh dim 0 holds R");
}

TEST(StepTest, AllToAllMovesTheSuffixToTheEndOfTheTarget) {
  const Mesh& mesh = Mesh222();
  EXPECT_EQ(
      ApplyText(mesh, "S(0),S(1),S(0)", Make(StepOp::kAllToAll, {2}, 0, 1)),
      "S(0),S(1)[0],S(1)[1]");
  EXPECT_EQ(
      ApplyText(mesh, "S(0),S(0),R", Make(StepOp::kAllToAll, {0, 1}, 0, 2)),
      "S(2)[0],S(2)[1],R");
  ExpectRefused(mesh, "S(0),R,R", Make(StepOp::kAllToAll, {0}, 0, 0),
                "all_to_all needs two different tensor dims");
  ExpectRefused(mesh, "S(0),R,R", Make(StepOp::kAllToAll, {0}, 0),
                "missing destination tensor dim");
  ExpectRefused(mesh, "S(0),S(0),R", Make(StepOp::kAllToAll, {0}, 0, 1),
                "the group must be the last mesh dims");
}

TEST(StepTest, ChunkSplitsReplicatedDims) {
  const Mesh& mesh = Mesh222();
  EXPECT_EQ(
      ApplyText(mesh, "S(0),R,R", Make(StepOp::kChunk, {2}, std::nullopt, 0)),
      "S(0)[0],R,S(0)[1]");
  ExpectRefused(mesh, "P(sum),R,R", Make(StepOp::kChunk, {0}, std::nullopt, 0),
                "mesh dim 0 holds P(sum)");
  ExpectRefused(mesh, "R,R,R", Make(StepOp::kChunk, {0}),
                "missing destination tensor dim");
}

TEST(StepTest, PartitionKeepsPartialMixesAllowed) {
  const Mesh& mesh = Mesh222();
  EXPECT_EQ(ApplyText(mesh, "R,R,R",
                      Make(StepOp::kPartition, {1}, std::nullopt, std::nullopt,
                           ReduceOp::kMax)),
            "R,P(max),R");
  EXPECT_EQ(ApplyText(mesh, "P(sum),R,R",
                      Make(StepOp::kPartition, {1}, std::nullopt, std::nullopt,
                           ReduceOp::kAvg)),
            "P(sum),P(avg),R");
  ExpectRefused(
      mesh, "P(sum),R,R",
      Make(StepOp::kPartition, {1}, std::nullopt, std::nullopt, ReduceOp::kMax),
      "it would mix Partial ops other than sum/avg");
  ExpectRefused(mesh, "S(0),R,R", Make(StepOp::kPartition, {0}),
                "mesh dim 0 holds S(0)");
}

TEST(StepTest, ShardToPartialTakesTheLastOrderEntry) {
  const Mesh& mesh = Mesh222();
  EXPECT_EQ(
      ApplyText(mesh, "S(0),S(0),R", Make(StepOp::kShardToPartial, {1}, 0)),
      "S(0),P(sum),R");
  ExpectRefused(mesh, "S(0),S(0),R", Make(StepOp::kShardToPartial, {0}, 0),
                "the group must be the last mesh dims");
  ExpectRefused(mesh, "S(0),P(max),R", Make(StepOp::kShardToPartial, {0}, 0),
                "it would mix Partial ops other than sum/avg");
}

TEST(StepTest, RefusesInvalidGroupsAndStates) {
  const Mesh& mesh = Mesh222();
  ExpectRefused(mesh, "P(sum),P(sum),R", Make(StepOp::kAllReduce, {0, 0}),
                "step.group[1]: mesh dim 0 is repeated");
  ExpectRefused(mesh, "P(sum),R,R", Make(StepOp::kAllReduce, {3}),
                "step.group[0]: mesh dim 3 out of range [0, 3)");
  Transition empty;  // a default Transition names no mesh dim
  empty.op = StepOp::kAllReduce;
  ExpectRefused(mesh, "P(sum),R,R", empty,
                "step.group: group must name >= 1 mesh dim");
  const DistState two_dims = ParseDistState("P(sum),R", 2, 3, "state").value();
  absl::StatusOr<DistState> to =
      Apply(mesh, two_dims, Make(StepOp::kAllReduce, {0}));
  ASSERT_FALSE(to.ok());
  EXPECT_NE(to.status().message().find("different dim counts"),
            std::string::npos);
}

TEST(StepTest, MakeStepInfersOpAndReduction) {
  const Mesh& mesh = Mesh222();
  absl::StatusOr<Step> mixed = MakeStep(mesh, State(mesh, "P(sum),P(avg),R"),
                                        State(mesh, "R,R,R"), {0, 1});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->op, StepOp::kAllReduce);
  EXPECT_EQ(mixed->reduce_op, ReduceOp::kSum);
  EXPECT_EQ(mixed->avg_divisor, 2);  // the avg dim's size
  absl::StatusOr<Step> avg = MakeStep(mesh, State(mesh, "P(avg),P(avg),R"),
                                      State(mesh, "S(0),S(0),R"), {0, 1});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(avg->op, StepOp::kReduceScatter);
  EXPECT_EQ(avg->reduce_op, ReduceOp::kAvg);
  EXPECT_EQ(avg->avg_divisor, 1);
  absl::StatusOr<Step> partition =
      MakeStep(mesh, State(mesh, "R,R,R"), State(mesh, "R,P(min),R"), {1});
  ASSERT_TRUE(partition.ok()) << partition.status();
  EXPECT_EQ(partition->reduce_op, ReduceOp::kMin);
  // The states must differ by exactly that step.
  EXPECT_FALSE(
      MakeStep(mesh, State(mesh, "S(0),R,R"), State(mesh, "R,S(1),R"), {0})
          .ok());
  EXPECT_FALSE(
      MakeStep(mesh, State(mesh, "R,R,R"), State(mesh, "R,R,R"), {0}).ok());
}

TEST(StepTest, InferOpCoversEveryPlacementPair) {
  const Placement s0 = Placement::Shard(0), s1 = Placement::Shard(1);
  const Placement r = Placement::Replicate(), p = Placement::Partial();
  EXPECT_EQ(InferOp(s0, r), StepOp::kAllGather);
  EXPECT_EQ(InferOp(s0, s1), StepOp::kAllToAll);
  EXPECT_EQ(InferOp(s0, p), StepOp::kShardToPartial);
  EXPECT_EQ(InferOp(p, r), StepOp::kAllReduce);
  EXPECT_EQ(InferOp(p, s1), StepOp::kReduceScatter);
  EXPECT_EQ(InferOp(r, s1), StepOp::kChunk);
  EXPECT_EQ(InferOp(r, p), StepOp::kPartition);
  EXPECT_EQ(InferOp(r, r), std::nullopt);
  EXPECT_EQ(InferOp(p, Placement::Partial(ReduceOp::kMax)), std::nullopt);
}

}  // namespace
}  // namespace reshard
