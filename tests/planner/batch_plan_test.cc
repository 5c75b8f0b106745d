// PlanBatch (planner/batch/batch_plan.h): per-item errors by default, the whole
// batch failing under all_or_nothing, the cache shared by repeated items,
// the stop check, and the schedule of the planned items.
#include "planner/batch/batch_plan.h"

#include "gtest/gtest.h"
#include "planner/search/plan_cache.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

std::vector<absl::StatusOr<PlanRequest>> Requests(
    const Mesh& mesh,
    const std::vector<
        std::tuple<std::vector<int64_t>, std::string, std::string>>& items) {
  std::vector<absl::StatusOr<PlanRequest>> out;
  for (const auto& [shape, src, dst] : items) {
    out.push_back(ParsePlanRequest(mesh, shape, "f32", src, dst, {}));
  }
  return out;
}

TEST(BatchPlanTest, BadItemsAreAnsweredWithTheirOwnErrors) {
  const Mesh mesh = MakeMesh({2, 2});
  const auto requests = Requests(mesh, {{{8, 8}, "S(0),R", "R,R"},
                                        {{8, 8}, "S(7),R", "R,R"},
                                        {{8, 8}, "S(0),R", "R,S(1)"}});
  PlanCache cache(16);
  absl::StatusOr<BatchPlan> batch = PlanBatch(mesh, requests, {}, cache);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->plans.size(), 3u);
  EXPECT_TRUE(batch->plans[0].ok());
  EXPECT_EQ(batch->plans[1].status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(batch->plans[1].status().message().substr(0, 18),
            "items[1].src[0]: s");
  EXPECT_TRUE(batch->plans[2].ok());
  EXPECT_EQ(batch->ItemErrors(), 1);
  // Both planned items gather on A: one bucket.
  ASSERT_EQ(batch->schedule.buckets.size(), 1u);
  EXPECT_EQ(batch->schedule.buckets[0].members.size(), 2u);
  EXPECT_EQ(batch->schedule.buckets[0].members[1].tensor, 2);
}

TEST(BatchPlanTest, AllOrNothingFailsTheBatchWithTheFirstItemError) {
  const Mesh mesh = MakeMesh({2});
  const auto requests = Requests(
      mesh, {{{8}, "S(0)", "R"}, {{8}, "S(0)", "P(max)"}, {{8}, "S(3)", "R"}});
  PlanCache cache(16);
  absl::StatusOr<BatchPlan> batch =
      PlanBatch(mesh, requests, {kDefaultBucketBytes, true}, cache);
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(batch.status().message().substr(0, 9), "items[2].");
}

TEST(BatchPlanTest, RepeatedItemsArePlannedOnce) {
  const Mesh mesh = MakeMesh({4});
  std::vector<std::tuple<std::vector<int64_t>, std::string, std::string>> items;
  for (int i = 0; i < 20; ++i) items.push_back({{64, 8}, "S(0)", "R"});
  PlanCache cache(16);
  absl::StatusOr<BatchPlan> batch =
      PlanBatch(mesh, Requests(mesh, items), {}, cache);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(cache.hits(), 19);
  EXPECT_FALSE(batch->plans[0]->cache_hit);
  EXPECT_TRUE(batch->plans[19]->cache_hit);
  EXPECT_EQ(batch->schedule.collectives_before, 20);
  EXPECT_EQ(batch->schedule.collectives_after, 1);
}

TEST(BatchPlanTest, ABudgetOverflowDegradesOnlyThatItem) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  std::vector<absl::StatusOr<PlanRequest>> requests;
  PlanOptions tiny;
  tiny.search_budget = 1;
  requests.push_back(ParsePlanRequest(mesh, {8, 8}, "f32", "S(0),S(1),P(sum)",
                                      "S(1),R,S(0)", tiny));
  requests.push_back(
      ParsePlanRequest(mesh, {8, 8}, "f32", "S(0),R,R", "R,R,R", tiny));
  PlanCache cache(16);
  absl::StatusOr<BatchPlan> batch = PlanBatch(mesh, requests, {}, cache);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_TRUE(batch->plans[0].ok()) << batch->plans[0].status();
  ASSERT_FALSE(batch->plans[0]->warnings.empty());
  EXPECT_EQ(batch->plans[0]->warnings[0].code,
            WarningCode::kSearchBudgetExceeded);
  EXPECT_TRUE(batch->plans[1].ok());
}

TEST(BatchPlanTest, StopEndsTheWholeBatch) {
  const Mesh mesh = MakeMesh({2});
  const auto requests = Requests(mesh, {{{8}, "S(0)", "R"}});
  PlanCache cache(16);
  absl::StatusOr<BatchPlan> batch = PlanBatch(mesh, requests, {}, cache, [] {
    return absl::DeadlineExceededError("planning stopped at the deadline");
  });
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(batch.status().message(), "planning stopped at the deadline");
}

TEST(BatchPlanTest, BucketBytesBelowOneIsRefused) {
  const Mesh mesh = MakeMesh({2});
  PlanCache cache(16);
  absl::StatusOr<BatchPlan> batch =
      PlanBatch(mesh, Requests(mesh, {{{8}, "S(0)", "R"}}), {0, false}, cache);
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(batch.status().message(), "bucket_bytes: must be >= 1, got 0");
  EXPECT_EQ(cache.misses(), 0);  // refused before planning anything
}

}  // namespace
}  // namespace reshard
