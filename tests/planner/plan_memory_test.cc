// A plan's and a batch's peak_bytes (planner/cost/plan_memory.h): what a rank's
// runner holds at most, packing buffers included. The executed property
// tests (gloo_property_test, batch_runner_test) check it against what ranks
// measure; these pin the edge cases and the cap's refusals.
#include "planner/cost/plan_memory.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/batch/batch_plan.h"
#include "planner/batch/bucket_layout.h"
#include "planner/core/local_layout.h"
#include "planner/core/step_memory.h"
#include "planner/search/plan_cache.h"
#include "planner/search/planner.h"
#include "tests/planner/random_cases.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

Mesh DpTp() {
  MeshSpec spec;
  spec.shape = {2, 4};
  spec.dim_names = {"dp", "tp"};
  return *Mesh::Create(spec);
}

absl::StatusOr<Plan> Bf16Plan(const Mesh& mesh, const std::string& src,
                              const std::string& dst,
                              const PlanOptions& options = {}) {
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, {1024, 1024}, "bf16", src, dst, options);
  if (!request.ok()) return request.status();
  return MakePlan(mesh, *request);
}

// Measured by `reshardctl exec --local 8 --mesh dp=2,tp=4 --shape 1024,1024
// --dtype bf16` on Gloo: the all_to_all receives into a wire buffer (its
// blocks are columns of the output), so it holds 3 x 512 KiB, not 2.
TEST(PlanMemoryTest, CountsTheAllToAllsReceiveBuffer) {
  absl::StatusOr<Plan> plan = Bf16Plan(DpTp(), "S(0),S(1)", "R,S(0)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak_bytes, 1572864);
  const PeakAt peak = PlanPeak(DpTp(), *plan);
  ASSERT_GE(peak.step, 0);
  EXPECT_EQ(plan->steps[peak.step].op, StepOp::kAllToAll);
}

TEST(PlanMemoryTest, CountsTheAllGathersUnpackBuffer) {
  absl::StatusOr<Plan> plan = Bf16Plan(DpTp(), "P(avg),S(1)", "R,R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak_bytes, 4718592);
}

TEST(PlanMemoryTest, APlanThatMovesNothingCopiesItsSourceThrough) {
  absl::StatusOr<Plan> plan = Bf16Plan(DpTp(), "S(0),R", "S(0),R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->steps.empty());
  EXPECT_EQ(plan->peak_bytes, 2 * 512 * 1024 * 2);
  EXPECT_EQ(PlanPeak(DpTp(), *plan).step, -1);
}

// The optimal search keeps each step's tensors within the cap; a plan
// whose packing buffers take it over is refused, naming the step, and a
// cap at its true peak is met.
TEST(PlanMemoryTest, TheCapCountsPackingBuffers) {
  PlanOptions options;
  options.max_peak_bytes = 1572864 - 1;
  absl::StatusOr<Plan> over = Bf16Plan(DpTp(), "S(0),S(1)", "R,S(0)", options);
  ASSERT_EQ(over.status().code(), absl::StatusCode::kFailedPrecondition)
      << over.status();
  EXPECT_EQ(over.status().message(),
            absl::StrCat("options.max_peak_bytes: the optimal plan (its "
                         "search keeps every step's tensors within the cap; "
                         "the step's packing buffers take it over) peaks at "
                         "1572864 bytes per rank (steps[1], all_to_all on "
                         "tp), above the cap of 1572863 bytes"));
  options.max_peak_bytes = 1572864;
  absl::StatusOr<Plan> fits = Bf16Plan(DpTp(), "S(0),S(1)", "R,S(0)", options);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->peak_bytes, 1572864);
}

// Two all_gathers on tp bucket into one: the bucket holds both tensors
// and the packed blocks, more than either plan alone.
TEST(PlanMemoryTest, ABatchPeaksAtItsLargestBucket) {
  const Mesh mesh = DpTp();
  std::vector<absl::StatusOr<PlanRequest>> requests;
  for (int i = 0; i < 2; ++i) {
    requests.push_back(
        ParsePlanRequest(mesh, {64, 64}, "f32", "R,S(0)", "R,R", {}));
  }
  PlanCache cache(16);
  absl::StatusOr<BatchPlan> batch = PlanBatch(mesh, requests, {}, cache);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->schedule.buckets.size(), 1u);
  ASSERT_EQ(batch->schedule.buckets[0].members.size(), 2u);
  // Each member: 16x64 in, 64x64 out. The bucket packs both members'
  // 16x64 blocks into its input block and receives 4 such packed blocks.
  const int64_t in = 16 * 64 * 4, out = 64 * 64 * 4;
  EXPECT_EQ(batch->schedule.peak_bytes, 2 * (in + out) + 2 * in + 4 * 2 * in);
  EXPECT_GT(batch->schedule.peak_bytes, batch->plans[0]->peak_bytes);
}

// Past kExactPeakWork the peak is an upper bound computed on the largest
// rank: never below what the exact walk finds on a smaller mesh.
TEST(PlanMemoryTest, LargeMeshesGetABoundQuickly) {
  const Mesh mesh = testing::MakeMesh({64, 64});
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, {4095, 4097}, "f32", "S(0),S(1)", "S(1),S(0)", {});
  ASSERT_TRUE(request.ok()) << request.status();
  absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // The largest rank's 64x64 source and output at least.
  EXPECT_GE(plan->peak_bytes, 2 * 64 * 64 * 4);
  EXPECT_LT(plan->planning_us, 2e6);
}

// The runner's accounting walked over every rank, from layouts alone: what
// PlanPeak and BatchPeakBytes must equal (they price even steps from
// extents and skip ranks that share a layout).
int64_t WalkedStep(const Mesh& mesh, const Plan& plan, const Step& step) {
  int64_t peak = 0;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    peak = std::max(
        peak, StepLiveBytes(step.op,
                            MakeStepLayout(mesh, plan.tensor.shape(), step, p),
                            plan.tensor.itemsize()));
  }
  return peak;
}

int64_t WalkedThrough(const Mesh& mesh, const Plan& plan) {
  int64_t peak = 0;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    peak = std::max(
        peak, 2 * plan.tensor.itemsize() *
                  LocalBox(mesh, plan.src, plan.tensor.shape(), p).numel());
  }
  return peak;
}

int64_t WalkedBatch(const Mesh& mesh, absl::Span<const Plan* const> plans,
                    const BucketSchedule& schedule) {
  int64_t peak = 0;
  for (const Plan* plan : plans) {
    bool moves = false;
    for (const Step& step : plan->steps) {
      if (mesh.GroupSize(step.group) == 1) continue;
      moves = true;
      if (!IsCollective(step.op)) {
        peak = std::max(peak, WalkedStep(mesh, *plan, step));
      }
    }
    if (!moves) peak = std::max(peak, WalkedThrough(mesh, *plan));
  }
  for (const Bucket& b : schedule.buckets) {
    const BucketMember& m = b.members[0];
    if (b.members.size() == 1) {
      peak = std::max(peak, WalkedStep(mesh, *plans[m.tensor],
                                       plans[m.tensor]->steps[m.step]));
      continue;
    }
    for (int64_t p = 0; p < mesh.world_size(); ++p) {
      peak = std::max(
          peak, BucketLiveBytes(b.op, MakeBucketLayout(mesh, b, plans, p)));
    }
  }
  return peak;
}

// Random meshes (registered groups), uneven and even shapes (extents that
// are multiples of the mesh's sizes), every planner; a plan alone and two
// or three tensors bucketed together.
TEST(PlanMemoryTest, EqualsTheRunnersAccountingWalkedOverEveryRank) {
  std::mt19937_64 rng(29005);
  int even = 0, shared = 0;
  for (int i = 0; i < testing::ScaledCases(1500); ++i) {
    testing::RandomCase c = testing::MakeRandomCase(rng, i % 2 ? 9 : 3);
    std::vector<int64_t> shape = c.tensor.shape();
    if (i % 2 == 0) {
      for (int64_t& e : shape) e *= 12;  // every split of sizes 1-4 is even
      ++even;
    }
    PlanOptions options;
    options.planner = static_cast<PlannerKind>(i % 3);
    std::vector<Plan> plans;
    for (int t = 0; t < 1 + i % 3; ++t) {
      const TensorSpec tensor = *TensorSpec::Create(
          shape, t == 1 ? DType::kBFloat16 : DType::kFloat32);
      absl::StatusOr<Plan> plan =
          MakePlan(c.mesh, {tensor, c.src, c.dst, options});
      if (!plan.ok()) break;
      ASSERT_EQ(PlanPeak(c.mesh, *plan).bytes, plan->peak_bytes);
      int64_t walked = 0;
      for (const Step& step : plan->steps) {
        if (c.mesh.GroupSize(step.group) > 1) {
          walked = std::max(walked, WalkedStep(c.mesh, *plan, step));
        }
      }
      if (std::none_of(
              plan->steps.begin(), plan->steps.end(),
              [&](const Step& s) { return c.mesh.GroupSize(s.group) > 1; })) {
        walked = WalkedThrough(c.mesh, *plan);
      }
      ASSERT_EQ(plan->peak_bytes, walked)
          << "case " << i << ": " << c.src.ToString() << " -> "
          << c.dst.ToString() << " on " << c.mesh.CanonicalText(true);
      plans.push_back(*std::move(plan));
    }
    std::vector<const Plan*> ptrs;
    for (const Plan& p : plans) ptrs.push_back(&p);
    absl::StatusOr<BucketSchedule> schedule =
        ScheduleBuckets(c.mesh, ptrs, {kDefaultBucketBytes, {}});
    ASSERT_TRUE(schedule.ok()) << schedule.status();
    for (const Bucket& b : schedule->buckets) shared += b.members.size() > 1;
    ASSERT_EQ(schedule->peak_bytes, WalkedBatch(c.mesh, ptrs, *schedule))
        << "case " << i << ": " << c.src.ToString() << " -> "
        << c.dst.ToString() << " on " << c.mesh.CanonicalText(true);
  }
  EXPECT_GT(even, 100);
  EXPECT_GT(shared, 100);
}

}  // namespace
}  // namespace reshard
