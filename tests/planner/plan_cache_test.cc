// The plan cache: the same request returns the same plan (and every option,
// but not the rank map, is part of the key), least recently used entries
// are evicted first, and concurrent use is safe.
#include "planner/search/plan_cache.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

TEST(PlanCacheTest, SameRequestSamePlan) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  PlanCache cache(8);
  const PlanRequest request = *ParsePlanRequest(
      mesh, {16, 16}, "f32", "P(sum),S(0),P(sum)", "R,R,R", {});
  absl::StatusOr<Plan> first = MakePlanCached(mesh, request, cache);
  absl::StatusOr<Plan> second = MakePlanCached(mesh, request, cache);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(second->cache_hit);
  second->cache_hit = false;
  EXPECT_EQ(PlanJson(mesh, *first), PlanJson(mesh, *second));
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 1);
  // Any option is part of the key.
  PlanRequest torch = request;
  torch.options.cost_model = CostModelKind::kTorch;
  EXPECT_NE(PlanFingerprint(mesh, request), PlanFingerprint(mesh, torch));
  // The rank map is not: plans are rank-independent.
  MeshSpec spec{
      {2, 2, 2}, {"A", "B", "C"}, {7, 6, 5, 4, 3, 2, 1, 0}, {{"A", "C"}}, {}};
  EXPECT_EQ(PlanFingerprint(*Mesh::Create(spec), request),
            PlanFingerprint(mesh, request));
}

// Capacity 0 is "off" (reshard-planner --cache_entries=0): nothing is kept,
// every call plans and counts as a miss.
TEST(PlanCacheTest, CapacityZeroKeepsNothing) {
  const Mesh mesh = MakeMesh({4});
  PlanCache cache(0);
  const PlanRequest request =
      *ParsePlanRequest(mesh, {8}, "f32", "S(0)", "R", {});
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Plan> plan = MakePlanCached(mesh, request, cache);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_FALSE(plan->cache_hit) << "call " << i;
  }
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.hits(), 0);
  EXPECT_EQ(cache.misses(), 2);
}

TEST(PlanCacheTest, EvictsLeastRecentlyUsed) {
  const Mesh mesh = MakeMesh({4});
  PlanCache cache(2);
  auto request = [&](const char* dst) {
    return *ParsePlanRequest(mesh, {8}, "f32", "S(0)", dst, {});
  };
  ASSERT_TRUE(MakePlanCached(mesh, request("R"), cache).ok());
  ASSERT_TRUE(MakePlanCached(mesh, request("P(sum)"), cache).ok());
  ASSERT_TRUE(MakePlanCached(mesh, request("R"), cache)->cache_hit);
  ASSERT_TRUE(
      MakePlanCached(mesh, request("P(max)"), cache).ok());  // evicts P(sum)
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(MakePlanCached(mesh, request("R"), cache)->cache_hit);
  EXPECT_FALSE(MakePlanCached(mesh, request("P(sum)"), cache)->cache_hit);
}

TEST(PlanCacheTest, ConcurrentUseIsSafe) {
  const Mesh mesh = MakeMesh({2, 2}, {{"A", "B"}});
  PlanCache cache(4);
  const char* dsts[] = {"R,R", "S(0),S(0)", "S(1),R", "R,S(1)", "S(0),S(1)"};
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const PlanRequest r = *ParsePlanRequest(
            mesh, {8, 8}, "f32", "P(sum),P(sum)", dsts[(t + i) % 5], {});
        absl::StatusOr<Plan> plan = MakePlanCached(mesh, r, cache);
        if (!plan.ok() || plan->dst != r.dst) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_LE(cache.size(), 4u);
  EXPECT_EQ(cache.hits() + cache.misses(), 1600);
}

TEST(PlanCacheTest, StaysWithinCapacity) {
  const Mesh mesh = MakeMesh({4});
  PlanCache cache(3);
  EXPECT_EQ(cache.capacity(), 3u);
  for (const char* dst : {"R", "P(sum)", "P(max)", "P(min)", "P(avg)"}) {
    const PlanRequest r = *ParsePlanRequest(mesh, {8}, "f32", "S(0)", dst, {});
    ASSERT_TRUE(MakePlanCached(mesh, r, cache).ok()) << dst;
    EXPECT_LE(cache.size(), 3u);
  }
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.misses(), 5);
  EXPECT_EQ(cache.hits(), 0);
}

TEST(PlanCacheTest, FailedPlansAreNotCached) {
  const Mesh mesh = MakeMesh({2, 2});
  PlanCache cache(4);
  PlanOptions options;
  options.planner = PlannerKind::kTorchGreedy;
  // PyTorch's greedy planner cannot reach P(avg) from S(0).
  const PlanRequest r =
      *ParsePlanRequest(mesh, {8}, "f32", "S(0),R", "P(avg),R", options);
  EXPECT_FALSE(MakePlanCached(mesh, r, cache).ok());
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace reshard
