// The bucketed schedule of docs/DESIGN.md §8: each rule on small batches, then
// the property on random batches of 1-500 tensors (mixed dtypes, uneven shapes,
// every op), judged by the reference simulator: running the buckets in
// order, each as its members' steps, leaves every tensor exactly what its
// own plan leaves; byte caps hold on every rank; every tensor's order holds.
#include "planner/batch/bucket_schedule.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/core/step_layout.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "reference/simulator.h"
#include "tests/planner/random_cases.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

Plan MustPlan(const Mesh& mesh, std::vector<int64_t> shape,
              absl::string_view dtype, absl::string_view src,
              absl::string_view dst, PlanOptions options = {}) {
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, std::move(shape), dtype, src, dst, options);
  EXPECT_TRUE(request.ok()) << request.status();
  absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

BucketSchedule MustSchedule(const Mesh& mesh, const std::vector<Plan>& plans,
                            int64_t bucket_bytes = kDefaultBucketBytes) {
  std::vector<const Plan*> ptrs;
  for (const Plan& p : plans) ptrs.push_back(&p);
  absl::StatusOr<BucketSchedule> s =
      ScheduleBuckets(mesh, ptrs, {bucket_bytes, {}});
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

std::vector<BucketMember> Members(std::vector<std::pair<int, int>> pairs) {
  std::vector<BucketMember> out;
  for (auto [t, s] : pairs) out.push_back({t, s});
  return out;
}

TEST(BucketScheduleTest, SmallGathersShareOneBucketAcrossDtypes) {
  const Mesh mesh = MakeMesh({4});
  std::vector<Plan> plans;
  for (int i = 0; i < 200; ++i) {
    plans.push_back(
        MustPlan(mesh, {64 + i % 7, 16}, i % 2 ? "bf16" : "f32", "S(0)", "R"));
  }
  const BucketSchedule s = MustSchedule(mesh, plans);
  ASSERT_EQ(s.buckets.size(), 1u);
  const Bucket& b = s.buckets[0];
  EXPECT_EQ(b.op, StepOp::kAllGather);
  EXPECT_EQ(b.members.size(), 200u);
  EXPECT_EQ(s.collectives_before, 200);
  EXPECT_EQ(s.collectives_after, 1);
  int64_t in = 0, out = 0;
  double before = 0;
  for (const Plan& p : plans) {
    in += p.steps[0].bytes / 4;  // the gathered output is 4 blocks
    out += p.steps[0].bytes;
    before += p.total_time_us;
  }
  EXPECT_EQ(b.in_bytes, in);
  EXPECT_EQ(b.out_bytes, out);
  EXPECT_EQ(b.bytes, out);
  EXPECT_DOUBLE_EQ(s.time_us_before, before);
  // One base latency and one ring of hops per bucket instead of per step:
  // base 6.6 us, 3 hops of 0.6 us, 3/4 of the bytes at 87.7 GB/s.
  const double expected = 6.6 + 3 * 0.6 + 0.75 * out / 87.7e9 * 1e6;
  EXPECT_NEAR(b.time_us, expected, 1e-9);
  EXPECT_DOUBLE_EQ(s.time_us_after, b.time_us);
  EXPECT_NEAR(before - s.time_us_after, 199 * (6.6 + 3 * 0.6), 1e-6);
}

TEST(BucketScheduleTest, ReductionsBucketOneDtypeAndOneReduction) {
  const Mesh mesh = MakeMesh({2, 2});
  const std::vector<Plan> plans = {
      MustPlan(mesh, {8}, "f32", "P(sum),R", "R,R"),
      MustPlan(mesh, {8}, "bf16", "P(sum),R", "R,R"),
      MustPlan(mesh, {8}, "f32", "P(max),R", "R,R"),
      MustPlan(mesh, {8}, "f32", "P(avg),R", "R,R"),
      MustPlan(mesh, {9}, "f32", "P(sum),R", "R,R"),
      MustPlan(mesh, {8}, "bf16", "P(sum),R", "R,R"),
  };
  const BucketSchedule s = MustSchedule(mesh, plans);
  ASSERT_EQ(s.buckets.size(), 4u);
  EXPECT_EQ(s.buckets[0].members, Members({{0, 0}, {4, 0}}));
  EXPECT_EQ(s.buckets[1].members, Members({{1, 0}, {5, 0}}));
  EXPECT_EQ(s.buckets[2].reduce_op, ReduceOp::kMax);
  EXPECT_EQ(s.buckets[3].reduce_op, ReduceOp::kAvg);
  EXPECT_EQ(s.buckets[3].avg_divisor, 1);
  for (const Bucket& b : s.buckets) EXPECT_EQ(b.op, StepOp::kAllReduce);
}

TEST(BucketScheduleTest, MixedAvgDivisorsDoNotShareABucket) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  const std::vector<Plan> plans = {
      MustPlan(mesh, {8}, "f32", "P(avg),P(sum)", "R,R"),
      MustPlan(mesh, {8}, "f32", "P(sum),P(avg)", "R,R"),
      MustPlan(mesh, {8}, "f32", "P(avg),P(sum)", "R,R"),
  };
  ASSERT_EQ(plans[0].steps.size(), 1u);
  ASSERT_EQ(plans[0].steps[0].avg_divisor, 2);
  ASSERT_EQ(plans[1].steps[0].avg_divisor, 4);
  const BucketSchedule s = MustSchedule(mesh, plans);
  ASSERT_EQ(s.buckets.size(), 2u);
  EXPECT_EQ(s.buckets[0].members, Members({{0, 0}, {2, 0}}));
  EXPECT_EQ(s.buckets[0].avg_divisor, 2);
  EXPECT_EQ(s.buckets[1].avg_divisor, 4);
}

TEST(BucketScheduleTest, ATensorsStepsKeepTheirOrder) {
  // Tensor 0 gathers B then A, tensor 1 A then B: tensor 1's gather on B
  // cannot join tensor 0's, which runs before its gather on A.
  const Mesh mesh = MakeMesh({2, 2});
  const std::vector<Plan> plans = {
      MustPlan(mesh, {8, 8}, "f32", "S(0),S(0)", "R,R"),
      MustPlan(mesh, {8, 8}, "f32", "S(0)[1]S(0)[0]", "R,R"),
      MustPlan(mesh, {8, 8}, "f32", "S(0),S(0)", "R,R"),
  };
  ASSERT_EQ(testing::Ops(mesh, plans[0]), "all_gather(B) all_gather(A)");
  ASSERT_EQ(testing::Ops(mesh, plans[1]), "all_gather(A) all_gather(B)");
  const BucketSchedule s = MustSchedule(mesh, plans);
  ASSERT_EQ(s.buckets.size(), 3u);
  EXPECT_EQ(s.buckets[0].members, Members({{0, 0}, {2, 0}}));
  EXPECT_EQ(s.buckets[1].members, Members({{0, 1}, {1, 0}, {2, 1}}));
  EXPECT_EQ(s.buckets[2].members, Members({{1, 1}}));
  EXPECT_EQ(s.collectives_before, 6);
  EXPECT_EQ(s.collectives_after, 3);
}

TEST(BucketScheduleTest, CapsSplitBucketsAndAnOversizedStepRunsAlone) {
  const Mesh mesh = MakeMesh({2});
  // Gathered outputs of 400, 400, 4000, 400 bytes; cap 1000.
  const std::vector<Plan> plans = {
      MustPlan(mesh, {100}, "f32", "S(0)", "R"),
      MustPlan(mesh, {100}, "f32", "S(0)", "R"),
      MustPlan(mesh, {1000}, "f32", "S(0)", "R"),
      MustPlan(mesh, {100}, "f32", "S(0)", "R"),
      MustPlan(mesh, {100}, "f32", "S(0)", "R"),
  };
  const BucketSchedule s = MustSchedule(mesh, plans, 1000);
  ASSERT_EQ(s.buckets.size(), 3u);
  EXPECT_EQ(s.buckets[0].members, Members({{0, 0}, {1, 0}}));
  EXPECT_EQ(s.buckets[0].bytes, 800);
  EXPECT_EQ(s.buckets[1].members, Members({{2, 0}}));
  EXPECT_EQ(s.buckets[1].bytes, 4000);
  EXPECT_EQ(s.buckets[2].members, Members({{3, 0}, {4, 0}}));
  // A cap of exactly a bucket's bytes still fits it.
  EXPECT_EQ(MustSchedule(mesh, {plans[0], plans[1]}, 800).buckets.size(), 1u);
  EXPECT_EQ(MustSchedule(mesh, {plans[0], plans[1]}, 799).buckets.size(), 2u);
}

TEST(BucketScheduleTest, LocalStepsAndSizeOneGroupsAreNotBucketed) {
  const Mesh mesh = MakeMesh({1, 2});
  const PlanOptions torch{PlannerKind::kTorchGreedy, CostModelKind::kTorch};
  const Plan local = MustPlan(mesh, {8}, "f32", "R,R", "S(0),S(0)", torch);
  const Plan mixed = MustPlan(mesh, {8}, "f32", "P(sum),S(0)", "R,R", torch);
  ASSERT_EQ(local.CommunicatingSteps(mesh), 0);
  ASSERT_EQ(mixed.steps.size(), 2u);
  ASSERT_EQ(mixed.CommunicatingSteps(mesh), 1);
  const int gather = mixed.steps[0].IsCommunicating(mesh) ? 0 : 1;
  const std::vector<const Plan*> plans = {&local, &mixed};
  absl::StatusOr<BucketSchedule> s = ScheduleBuckets(
      mesh, plans, {kDefaultBucketBytes, {CostModelKind::kTorch, 8}});
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->buckets.size(), 1u);
  EXPECT_EQ(s->buckets[0].members, Members({{1, gather}}));
  EXPECT_EQ(s->collectives_before, 1);
  // The torch model prices the step on the size-1 group (its base 6.6 us);
  // it stays in the bucketed time too.
  const double size_one = mixed.steps[1 - gather].time_us;
  EXPECT_DOUBLE_EQ(size_one, 6.6);
  EXPECT_NEAR(s->time_us_before, local.total_time_us + mixed.total_time_us,
              1e-9);
  EXPECT_NEAR(s->time_us_after, s->buckets[0].time_us + size_one, 1e-9);
}

// (A,B) and the registered (A,B,C), C of size 1, are one communicator: the
// same ranks in the same order. Steps on either share a bucket, which the
// schedule check accepts.
TEST(BucketScheduleTest, GroupsEqualUpToSizeOneDimsShareABucket) {
  const Mesh mesh = MakeMesh({2, 2, 1}, {{"A", "B", "C"}});
  PlanOptions merged{PlannerKind::kTorchGreedy};
  merged.merge = true;
  const Plan three =
      MustPlan(mesh, {8}, "f32", "S(0)[0],S(0)[1],S(0)[2]", "R,R,R", merged);
  const Plan two = MustPlan(mesh, {8}, "f32", "S(0)[0],S(0)[1],R", "R,R,R");
  ASSERT_EQ(three.CommunicatingSteps(mesh), 1);
  ASSERT_EQ(two.CommunicatingSteps(mesh), 1);
  const Step& s3 = three.steps[0];
  const Step& s2 = two.steps[0];
  ASSERT_EQ(s3.group, (Group{0, 1, 2})) << PlanTable(mesh, three);
  ASSERT_EQ(s2.group, (Group{0, 1})) << PlanTable(mesh, two);
  EXPECT_EQ(mesh.GroupName(s2.group), "A_B_C");
  const std::vector<Plan> plans = {three, two};
  const BucketSchedule s = MustSchedule(mesh, plans);
  ASSERT_EQ(s.buckets.size(), 1u);
  EXPECT_EQ(s.buckets[0].group, s3.group);
  EXPECT_EQ(s.buckets[0].members, Members({{0, 0}, {1, 0}}));
  const std::vector<const Plan*> ptrs = {&plans[0], &plans[1]};
  EXPECT_TRUE(CheckBucketSchedule(mesh, ptrs, s).ok());
}

TEST(BucketScheduleTest, ItemsWithoutPlansTakeNoPart) {
  const Mesh mesh = MakeMesh({2});
  const Plan plan = MustPlan(mesh, {8}, "f32", "S(0)", "R");
  const std::vector<const Plan*> plans = {nullptr, &plan, nullptr, &plan};
  absl::StatusOr<BucketSchedule> s = ScheduleBuckets(mesh, plans, {});
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->buckets.size(), 1u);
  EXPECT_EQ(s->buckets[0].members, Members({{1, 0}, {3, 0}}));
  absl::StatusOr<BucketSchedule> none = ScheduleBuckets(mesh, {}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->buckets.empty());
  EXPECT_EQ(none->time_us_after, 0);
}

TEST(BucketScheduleTest, BucketBytesBelowOneIsRefusedNamingTheField) {
  const Mesh mesh = MakeMesh({2});
  for (int64_t bytes : {0, -5}) {
    absl::StatusOr<BucketSchedule> s = ScheduleBuckets(mesh, {}, {bytes, {}});
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.status().message(),
              absl::StrCat("bucket_bytes: must be >= 1, got ", bytes));
  }
}

TEST(BucketScheduleTest, TorchModelPricesBucketsByItsFormula) {
  const Mesh mesh = MakeMesh({4});
  PlanOptions torch{PlannerKind::kOptimal, CostModelKind::kTorch};
  std::vector<Plan> plans;
  for (int i = 0; i < 3; ++i) {
    plans.push_back(MustPlan(mesh, {1024}, "f32", "P(sum)", "R", torch));
  }
  std::vector<const Plan*> ptrs = {&plans[0], &plans[1], &plans[2]};
  absl::StatusOr<BucketSchedule> s = ScheduleBuckets(
      mesh, ptrs, {kDefaultBucketBytes, {CostModelKind::kTorch, 8}});
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->buckets.size(), 1u);
  // PyTorch's all_reduce: 6.6 + 2(n-1)·0.6 + B·2(n-1)/n / bw, B in GiB.
  const double gib = 3 * 4096.0 / (1024.0 * 1024 * 1024);
  EXPECT_NEAR(s->buckets[0].time_us, 6.6 + 6 * 0.6 + gib * 1.5 / 87.7 * 1e6,
              1e-9);
}

// ---------------------------------------------------------------------------
// The property, on random batches.

struct RandomBatch {
  Mesh mesh;
  std::vector<Plan> plans;
  int64_t bucket_bytes = kDefaultBucketBytes;
};

constexpr DType kDtypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                             DType::kFloat16, DType::kInt32,   DType::kInt64};

// A batch as models move: a few layout changes shared by many tensors of
// uneven shapes and mixed dtypes, on one random mesh.
RandomBatch MakeRandomBatch(std::mt19937_64& rng) {
  RandomBatch batch{testing::MakeRandomCase(rng).mesh, {}, 0};
  const int tensors = rng() % 4 == 0
                          ? std::uniform_int_distribution<int>(1, 500)(rng)
                          : std::uniform_int_distribution<int>(1, 60)(rng);
  const int layouts = std::uniform_int_distribution<int>(1, 4)(rng);
  const int rank = std::uniform_int_distribution<int>(1, 3)(rng);
  std::vector<std::pair<DistState, DistState>> pairs;
  for (int l = 0; l < layouts; ++l) {
    pairs.emplace_back(testing::RandomState(rng, batch.mesh, rank),
                       testing::RandomState(rng, batch.mesh, rank));
  }
  for (int attempt = 0;
       attempt < 4 * tensors && static_cast<int>(batch.plans.size()) < tensors;
       ++attempt) {
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d) shape.push_back(1 + rng() % 9);
    const TensorSpec tensor = *TensorSpec::Create(shape, kDtypes[rng() % 6]);
    const auto& [src, dst] = pairs[rng() % pairs.size()];
    absl::StatusOr<Plan> plan = MakePlan(batch.mesh, {tensor, src, dst, {}});
    if (plan.ok()) batch.plans.push_back(*std::move(plan));
  }
  batch.bucket_bytes =
      rng() % 3 == 0 ? kDefaultBucketBytes
                     : std::uniform_int_distribution<int64_t>(1, 4096)(rng);
  return batch;
}

using Buffers = std::vector<LocalTensor<double>>;

Buffers SourceBuffers(std::mt19937_64& rng, const Mesh& mesh,
                      const Plan& plan) {
  Buffers buffers(mesh.world_size());
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    buffers[p].shape = LocalBox(mesh, plan.src, plan.tensor.shape(), p).extent;
    int64_t numel = 1;
    for (int64_t e : buffers[p].shape) numel *= e;
    for (int64_t k = 0; k < numel; ++k) {
      buffers[p].data.push_back(static_cast<double>(rng() % 61) - 30);
    }
  }
  return buffers;
}

// Runs tensor `t`'s steps [from, to), which must not communicate unless
// `last_communicates` allows it for the last one.
void RunSteps(const Mesh& mesh, const Plan& plan, int from, int to,
              bool last_communicates, Buffers& buffers) {
  for (int j = from; j < to; ++j) {
    const Step& step = plan.steps[j];
    const bool may = last_communicates && j == to - 1;
    ASSERT_EQ(step.IsCommunicating(mesh), may)
        << "step " << j << " " << StepOpName(step.op);
    ASSERT_TRUE(RunStep(mesh, plan.tensor.shape(), step, buffers).ok());
  }
}

// Member sizes from each rank's StepLayout: the packed buffer a bucket
// needs on that rank, in bytes (input, output).
std::pair<int64_t, int64_t> RankBuffers(const Mesh& mesh, const Plan& plan,
                                        const Step& step, int64_t position) {
  const StepLayout layout =
      MakeStepLayout(mesh, plan.tensor.shape(), step, position);
  const WireBlocks blocks = CollectiveWireBlocks(step.op, layout.group_size);
  const int64_t block = layout.BlockNumel() * plan.tensor.itemsize();
  return {blocks.in * block, blocks.out * block};
}

void CheckBucketRules(const RandomBatch& batch, const Bucket& bucket) {
  ASSERT_FALSE(bucket.members.empty());
  std::set<DType> dtypes;
  std::vector<int64_t> in(batch.mesh.world_size()), out(in.size());
  for (const BucketMember& m : bucket.members) {
    const Plan& plan = batch.plans[m.tensor];
    const Step& step = plan.steps[m.step];
    ASSERT_EQ(step.op, bucket.op);
    ASSERT_EQ(step.group, bucket.group);
    if (bucket.Reduces()) {
      ASSERT_EQ(step.reduce_op, bucket.reduce_op);
      ASSERT_EQ(step.avg_divisor, bucket.avg_divisor);
    }
    dtypes.insert(plan.tensor.dtype());
    for (int64_t p = 0; p < batch.mesh.world_size(); ++p) {
      const auto [i, o] = RankBuffers(batch.mesh, plan, step, p);
      in[p] += i;
      out[p] += o;
    }
  }
  if (bucket.Reduces()) {
    ASSERT_EQ(dtypes.size(), 1u);
  }
  // The bucket's bytes are the largest rank's packed buffer, exactly.
  int64_t largest = 0;
  for (size_t p = 0; p < in.size(); ++p) {
    largest = std::max({largest, in[p], out[p]});
  }
  ASSERT_EQ(bucket.bytes, largest);
  if (bucket.members.size() > 1) {
    ASSERT_LE(bucket.bytes, batch.bucket_bytes);
  }
}

// Runs the schedule, bucket by bucket, each as its members' steps (a
// tensor's local steps at its point in order), and compares every tensor
// with its plan run alone.
void CheckSchedule(std::mt19937_64& rng, const RandomBatch& batch,
                   const BucketSchedule& schedule) {
  const Mesh& mesh = batch.mesh;
  const size_t n = batch.plans.size();
  std::vector<Buffers> alone(n), bucketed(n);
  for (size_t t = 0; t < n; ++t) {
    alone[t] = bucketed[t] = SourceBuffers(rng, mesh, batch.plans[t]);
    const Plan& plan = batch.plans[t];
    for (const Step& step : plan.steps) {
      ASSERT_TRUE(RunStep(mesh, plan.tensor.shape(), step, alone[t]).ok());
    }
  }
  std::vector<int> next(n, 0);  // each tensor's next step to run
  for (const Bucket& bucket : schedule.buckets) {
    ASSERT_NO_FATAL_FAILURE(CheckBucketRules(batch, bucket));
    std::set<int> tensors;
    for (const BucketMember& m : bucket.members) {
      ASSERT_TRUE(tensors.insert(m.tensor).second) << "tensor twice";
      ASSERT_GE(m.step, next[m.tensor]) << "order of tensor " << m.tensor;
      ASSERT_NO_FATAL_FAILURE(RunSteps(mesh, batch.plans[m.tensor],
                                       next[m.tensor], m.step + 1, true,
                                       bucketed[m.tensor]));
      next[m.tensor] = m.step + 1;
    }
  }
  for (size_t t = 0; t < n; ++t) {
    const Plan& plan = batch.plans[t];
    ASSERT_NO_FATAL_FAILURE(RunSteps(mesh, plan, next[t],
                                     static_cast<int>(plan.steps.size()), false,
                                     bucketed[t]));
    for (int64_t p = 0; p < mesh.world_size(); ++p) {
      ASSERT_EQ(bucketed[t][p].shape, alone[t][p].shape);
      ASSERT_EQ(bucketed[t][p].data, alone[t][p].data)
          << "tensor " << t << " rank position " << p;
    }
  }
}

TEST(BucketSchedulePropertyTest, RandomBatchesGiveEveryTensorItsOwnResult) {
  std::mt19937_64 rng(20261201);
  // A scaled-down corpus (RESHARD_PROPERTY_CASES_DIVISOR) still grows
  // until it has seen every op, within the full corpus' size.
  const int scaled = testing::ScaledCases(500);
  std::map<StepOp, int> ops;
  int64_t before = 0, after = 0, multi = 0;
  int batches = 0;
  for (int i = 0; i < 500 && (i < scaled || ops.size() < 7); ++i) {
    ++batches;
    const RandomBatch batch = MakeRandomBatch(rng);
    SCOPED_TRACE(absl::StrCat(
        "batch ", i, ": mesh [", absl::StrJoin(batch.mesh.shape(), ","), "], ",
        batch.plans.size(), " tensors, cap ", batch.bucket_bytes));
    std::vector<const Plan*> ptrs;
    for (const Plan& p : batch.plans) {
      ptrs.push_back(&p);
      for (const Step& s : p.steps) ++ops[s.op];
    }
    absl::StatusOr<BucketSchedule> schedule =
        ScheduleBuckets(batch.mesh, ptrs, {batch.bucket_bytes, {}});
    ASSERT_TRUE(schedule.ok()) << schedule.status();
    ASSERT_NO_FATAL_FAILURE(CheckSchedule(rng, batch, *schedule));
    ASSERT_TRUE(CheckBucketSchedule(batch.mesh, ptrs, *schedule).ok());
    // Tensor by tensor: one bucket per communicating step, in tensor order,
    // a schedule of the same plans that saves nothing.
    const BucketSchedule each = UnbucketedSchedule(batch.mesh, ptrs, {});
    ASSERT_TRUE(CheckBucketSchedule(batch.mesh, ptrs, each).ok());
    ASSERT_EQ(each.collectives_after, schedule->collectives_before);
    for (const Bucket& b : each.buckets) ASSERT_EQ(b.members.size(), 1u);
    ASSERT_NEAR(each.time_us_after, each.time_us_before,
                1e-9 * each.time_us_before + 1e-9);
    // Deterministic, and never more collectives or time than unbucketed.
    absl::StatusOr<BucketSchedule> again =
        ScheduleBuckets(batch.mesh, ptrs, {batch.bucket_bytes, {}});
    ASSERT_EQ(again->buckets.size(), schedule->buckets.size());
    for (size_t b = 0; b < again->buckets.size(); ++b) {
      ASSERT_EQ(again->buckets[b].members, schedule->buckets[b].members);
    }
    ASSERT_LE(schedule->collectives_after, schedule->collectives_before);
    ASSERT_LE(schedule->time_us_after,
              schedule->time_us_before * (1 + 1e-12) + 1e-9);
    before += schedule->collectives_before;
    after += schedule->collectives_after;
    for (const Bucket& b : schedule->buckets) multi += b.members.size() > 1;
  }
  // The corpus exercises every op, and buckets that hold several steps.
  for (StepOp op : {StepOp::kAllGather, StepOp::kAllReduce,
                    StepOp::kReduceScatter, StepOp::kAllToAll, StepOp::kChunk,
                    StepOp::kPartition, StepOp::kShardToPartial}) {
    EXPECT_GT(ops[op], 0) << StepOpName(op);
  }
  EXPECT_GT(multi, 0);
  std::printf("%d batches: %lld collectives tensor by tensor, %lld bucketed\n",
              batches, static_cast<long long>(before),
              static_cast<long long>(after));
}

}  // namespace
}  // namespace reshard
