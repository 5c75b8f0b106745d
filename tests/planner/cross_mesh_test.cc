// Cross-mesh planning on known cases (docs/DESIGN.md §9): a refit-like
// pair, the JSON's fields and digest, peak bytes on ranks of both meshes,
// unavailable ranks, and invalid requests naming their field.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_cost.h"
#include "planner/cross/cross_planner.h"
#include "planner/cross/layout_digest.h"
#include "planner/format/cross_plan_format.h"
#include "tests/json_lite.h"

namespace reshard {
namespace {

Mesh MeshWith(std::vector<int64_t> shape, std::vector<std::string> names,
              std::vector<int64_t> ranks) {
  absl::StatusOr<Mesh> mesh =
      Mesh::Create({.shape = shape, .dim_names = names, .rank_map = ranks});
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

absl::StatusOr<CrossMeshPlan> Plan(const Mesh& s, const Mesh& d,
                                   std::vector<int64_t> shape,
                                   const std::string& src,
                                   const std::string& dst,
                                   std::vector<int64_t> unavailable = {}) {
  absl::StatusOr<CrossMeshRequest> r = ParseCrossMeshRequest(
      s, d, std::move(shape), "f32", src, dst, std::move(unavailable), {}, {});
  if (!r.ok()) return r.status();
  return MakeCrossMeshPlan(s, d, *r);
}

TEST(CrossMeshTest, ShardedRowsToShardedColumnsSpreadOverBothReplicas) {
  // 4x2 S(0),R on ranks 0-7 to 2x4 R,S(1) on ranks 8-15: each row block has
  // two holders, and each of them sends half of its pieces.
  const Mesh src = MeshWith({4, 2}, {"A", "B"}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Mesh dst = MeshWith({2, 4}, {"X", "Y"}, {8, 9, 10, 11, 12, 13, 14, 15});
  absl::StatusOr<CrossMeshPlan> plan =
      Plan(src, dst, {16, 16}, "S(0),R", "R,S(1)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->pre.steps.empty());
  EXPECT_EQ(plan->src_mid.ToString(), "S(0),R");
  // 16x16 f32 = 1024 bytes, to two replicas of every column block.
  EXPECT_EQ(plan->bytes_by_rank.max_send, 2048 / 8);
  EXPECT_DOUBLE_EQ(plan->bytes_by_rank.mean_send, 2048.0 / 8);
  for (const Transfer& t : plan->transfers) EXPECT_NE(t.from, t.to);
}

TEST(CrossMeshTest, PartialSourcesReduceWhereTheDataIsAndNoMore) {
  const Mesh src = MeshWith({2, 2}, {"A", "B"}, {0, 1, 2, 3});
  const Mesh dst = MeshWith({4}, {"X"}, {4, 5, 6, 7});
  absl::StatusOr<CrossMeshPlan> plan =
      Plan(src, dst, {8, 8}, "S(0),P(sum)", "S(1)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->src_mid.placement(0).is_shard());
  EXPECT_FALSE(plan->src_mid.placement(1).is_partial());
  ASSERT_FALSE(plan->pre.steps.empty());
  EXPECT_NE(plan->pre.steps[0].op, StepOp::kAllGather);
}

TEST(CrossMeshTest, RanksInBothMeshesCopyToThemselvesAndHoldBothRoles) {
  // The same four ranks, permuted: rank 0 holds row block 0 and needs
  // column block 0, so part of it is a copy to itself.
  const Mesh src = MeshWith({4}, {"A"}, {0, 1, 2, 3});
  const Mesh dst = MeshWith({4}, {"X"}, {3, 2, 1, 0});
  absl::StatusOr<CrossMeshPlan> plan = Plan(src, dst, {8, 8}, "S(0)", "S(1)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  int self = 0;
  for (const Transfer& t : plan->transfers) self += t.from == t.to ? 1 : 0;
  EXPECT_EQ(self, 4);
  // Sent bytes leave the copies out: 256 bytes in all, 64 of them local.
  EXPECT_EQ(plan->bytes_by_rank.max_send, (256 - 64) / 4);
  // Every rank holds an 8x2 source box and a 2x8 destination box at once.
  EXPECT_EQ(plan->peak_bytes, 2 * 16 * 4);
}

TEST(CrossMeshTest, UnavailableRanksDoNotSend) {
  const Mesh src = MeshWith({2, 2}, {"A", "B"}, {0, 1, 2, 3});
  const Mesh dst = MeshWith({2}, {"X"}, {4, 5});
  absl::StatusOr<CrossMeshPlan> plan =
      Plan(src, dst, {4, 4}, "S(0),R", "R", {0, 3});
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const Transfer& t : plan->transfers) {
    EXPECT_NE(t.from, 0);
    EXPECT_NE(t.from, 3);
  }
  absl::StatusOr<CrossMeshPlan> lost =
      Plan(src, dst, {4, 4}, "S(0),R", "R", {0, 1});
  ASSERT_EQ(lost.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(lost.status().message(),
            "unavailable_ranks: the source box at offset [0,0] extent [2,4] "
            "is held only by unavailable ranks 0, 1");
  absl::StatusOr<CrossMeshPlan> partial =
      Plan(src, dst, {4, 4}, "S(0),P(sum)", "R", {3});
  ASSERT_EQ(partial.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(partial.status().message(),
            "unavailable_ranks: src[1] is P(sum): its reduction needs every "
            "source rank, and unavailable ranks cannot take part");
}

TEST(CrossMeshTest, InvalidRequestsNameTheirField) {
  const Mesh src = MeshWith({2}, {"A"}, {0, 1});
  const Mesh dst = MeshWith({2}, {"X"}, {2, 3});
  struct Case {
    std::string dst;
    std::vector<int64_t> unavailable;
    std::string message;
  } cases[] = {
      {"P(max)",
       {},
       "dst[0]: P(max) cannot be a cross-mesh destination: no local step makes "
       "a P(max) or P(min) from received data (docs/DESIGN.md §9)"},
      {"R",
       {2},
       "unavailable_ranks[0]: rank 2 is not a rank of the source mesh"},
      {"R", {1, 1}, "unavailable_ranks[1]: rank 1 listed twice"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CrossMeshPlan> plan =
        Plan(src, dst, {4}, "S(0)", c.dst, c.unavailable);
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(plan.status().message(), c.message);
  }
  // Meshes past kMaxCrossMeshRanks are refused before any box is made.
  const Mesh huge = *Mesh::Create({.shape = {int64_t{1} << 21}});
  absl::StatusOr<CrossMeshPlan> too_many = Plan(src, huge, {4}, "S(0)", "R");
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(too_many.status().message(),
            "dst_mesh: 2097152 ranks; cross-mesh plans take meshes of at most "
            "1048576");
  absl::StatusOr<Mesh> twice =
      Mesh::Create({.shape = {2}, .dim_names = {"A"}, .rank_map = {1, 1}});
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(twice.status().message().find("mesh.rank_map"), std::string::npos)
      << twice.status();
  absl::StatusOr<Mesh> short_map =
      Mesh::Create({.shape = {4}, .dim_names = {"A"}, .rank_map = {0, 1}});
  EXPECT_EQ(short_map.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(short_map.status().message().find("mesh.rank_map"),
            std::string::npos)
      << short_map.status();
}

TEST(CrossMeshTest, ThePeakCapCountsBothRoles) {
  // Ranks 0-3 in both meshes: each holds a 2x8 f32 source box (64 bytes)
  // and an 8x2 destination box (64 bytes) at once.
  const Mesh src = MeshWith({4}, {"A"}, {0, 1, 2, 3});
  const Mesh dst = MeshWith({4}, {"X"}, {3, 2, 1, 0});
  PlanOptions options;
  options.max_peak_bytes = 127;
  absl::StatusOr<CrossMeshRequest> r = ParseCrossMeshRequest(
      src, dst, {8, 8}, "f32", "S(0)", "S(1)", {}, {}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<CrossMeshPlan> plan = MakeCrossMeshPlan(src, dst, *r);
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(plan.status().message(),
            "options.max_peak_bytes: every cross-mesh plan peaks at 128 bytes "
            "per rank or more (a rank's source and destination roles "
            "together), above the cap of 127 bytes");
  r->options.max_peak_bytes = 128;
  EXPECT_TRUE(MakeCrossMeshPlan(src, dst, *r).ok());
}

TEST(CrossMeshTest, JsonCarriesTheCompactFormAndTheLayoutDigest) {
  const Mesh src = MeshWith({2}, {"A"}, {0, 1});
  const Mesh dst = MeshWith({2}, {"X"}, {2, 3});
  absl::StatusOr<CrossMeshPlan> plan = Plan(src, dst, {4}, "S(0)", "R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string layout =
      LayoutJson(src, dst, plan->tensor, plan->src, plan->dst);
  EXPECT_EQ(
      layout,
      "{\"src_mesh\":{\"shape\":[2],\"dim_names\":[\"A\"],\"flattened\":[],"
      "\"rank_map\":[0,1]},\"dst_mesh\":{\"shape\":[2],\"dim_names\":[\"X\"],"
      "\"flattened\":[],\"rank_map\":[2,3]},\"tensor\":{\"shape\":[4],"
      "\"dtype\":\"float32\"},\"src\":\"S(0)\",\"dst\":\"R\"}");
  const std::string json = CrossPlanJson(src, dst, *plan);
  const testing::Json v = testing::Json::Parse(json);
  EXPECT_EQ(v["kind"].string, "cross_mesh");
  EXPECT_EQ(v["layout_digest"].string, DigestHex(plan->layout_digest));
  EXPECT_EQ(v["sender_rule"]["name"].string, "least_loaded_holder");
  EXPECT_EQ(v["transfers"].array.size(), plan->transfers.size());
  EXPECT_EQ(v["dst_mesh"]["rank_map"].Ints(), (std::vector<int64_t>{2, 3}));
  const std::string omitted = CrossPlanJson(src, dst, *plan, 1);
  EXPECT_NE(omitted.find("\"transfers\":[],\"transfers_omitted\":4"),
            std::string::npos)
      << omitted;
}

// Two pipeline stages (ranks 0-1 and 2-3), each item from its own stage's
// sub-mesh, to a 4-rank tensor-parallel mesh (ranks 4-7).
std::vector<CrossBatchItem> StageItems(const Mesh& dst) {
  auto stage = [](std::vector<int64_t> ranks) {
    return std::make_shared<const Mesh>(MeshWith({2}, {"D"}, ranks));
  };
  const std::shared_ptr<const Mesh> stages[] = {stage({0, 1}), stage({2, 3})};
  std::vector<CrossBatchItem> items;
  for (int i = 0; i < 4; ++i) {
    const std::shared_ptr<const Mesh>& src = stages[i / 2];
    absl::StatusOr<CrossMeshRequest> r = ParseCrossMeshRequest(
        *src, dst, {64, 32}, "bf16", "R", i % 2 ? "S(1)" : "S(0)", {}, {}, {});
    EXPECT_TRUE(r.ok()) << r.status();
    items.push_back({absl::StrCat("w", i), src, *r});
  }
  return items;
}

TEST(CrossMeshBatchTest, StagesBucketedUnderTheBoundCoverEveryTransfer) {
  const Mesh unused = MeshWith({4}, {"P"}, {0, 1, 2, 3});
  const Mesh dst = MeshWith({4}, {"X"}, {4, 5, 6, 7});
  const std::vector<CrossBatchItem> items = StageItems(dst);
  for (int64_t bound : {int64_t{1} << 30, int64_t{2048}, int64_t{1}}) {
    absl::StatusOr<CrossBatchPlan> batch =
        MakeCrossMeshBatch(unused, dst, items, bound);
    ASSERT_TRUE(batch.ok()) << batch.status();
    std::set<std::pair<int, int>> covered;
    int64_t transfers = 0, bytes = 0;
    for (const CrossBucket& b : batch->buckets) {
      covered.insert(b.members.begin(), b.members.end());
      transfers += static_cast<int64_t>(b.members.size());
      bytes += b.bytes;
      // A 1,024-byte piece alone may pass a smaller bound, no more.
      EXPECT_LE(b.max_rank_bytes, std::max<int64_t>(bound, 1024)) << bound;
    }
    EXPECT_EQ(static_cast<int64_t>(covered.size()), transfers);  // once each
    int64_t expected_transfers = 0, expected_bytes = 0;
    for (const auto& plan : batch->plans) {
      ASSERT_TRUE(plan.ok()) << plan.status();
      expected_transfers += static_cast<int64_t>(plan->transfers.size());
      expected_bytes += plan->bytes_by_rank.total;
    }
    EXPECT_EQ(transfers, expected_transfers);
    EXPECT_EQ(bytes, expected_bytes);
    EXPECT_EQ(batch->bytes_by_rank.max_recv, 4 * 64 * 32 * 2 / 4);
    if (bound == int64_t{1} << 30) {
      // One bucket: every rank pair's pieces as one message, one latency.
      ASSERT_EQ(batch->buckets.size(), 1u);
      double separately = 0;
      for (const auto& plan : batch->plans)
        separately += plan->transfer_time_us;
      EXPECT_LT(batch->transfer_time_us, separately);
    }
  }
}

TEST(CrossMeshBatchTest, ABadItemIsItsOwnErrorAndABadBoundTheCalls) {
  const Mesh dst = MeshWith({4}, {"X"}, {4, 5, 6, 7});
  std::vector<CrossBatchItem> items = StageItems(dst);
  items[1].invalid = absl::InvalidArgumentError("to[0]: bad");
  absl::StatusOr<CrossBatchPlan> batch =
      MakeCrossMeshBatch(*items[0].src_mesh, dst, items, 1 << 20);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->plans[1].status().message(), "to[0]: bad");
  EXPECT_TRUE(batch->plans[2].ok());
  const std::string json =
      CrossBatchJson(*items[0].src_mesh, dst, items, *batch);
  const testing::Json v = testing::Json::Parse(json);
  EXPECT_EQ(v["kind"].string, "cross_mesh_batch");
  EXPECT_EQ(v["items"].array[1]["error"]["message"].string, "to[0]: bad");
  EXPECT_EQ(v["items"].array[2]["plan"]["src_mesh"]["rank_map"].Ints(),
            (std::vector<int64_t>{2, 3}));
  absl::StatusOr<CrossBatchPlan> refused =
      MakeCrossMeshBatch(*items[0].src_mesh, dst, items, 0);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "bucket_bytes: must be at least 1 byte");
}

}  // namespace
}  // namespace reshard
