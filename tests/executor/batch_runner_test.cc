// Batches on real Gloo ranks, each its own process (docs/DESIGN.md §8): random
// batches (mixed dtypes, uneven shapes, every op, every planner, small and
// default bucket caps) run bucketed and tensor by tensor; every tensor on
// every rank must validate element by element against the data rule and
// report the checksum computed here independently, in both modes. Also:
// the wire format's invariant (members of a group agree on the packed
// block), schedules that do not fit their plans refused before any
// communicator, and ranks given different schedules refused by digest.
#include "executor/run/batch_runner.h"

#include <map>
#include <random>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/judge/harness.h"
#include "executor/launch/local_launch.h"
#include "executor/memory/host_table_space.h"
#include "executor/stores/file_store.h"
#include "executor/stores/rendezvous_dir.h"
#include "gtest/gtest.h"
#include "planner/batch/bucket_layout.h"
#include "run_values/report_codec.h"
#include "run_values/run_summary.h"
#include "tests/executor/executor_cases.h"
#include "tests/executor/space_checking.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using executor::RankReport;

struct BatchCase {
  Mesh mesh;
  std::vector<Plan> plans;
  BucketSchedule schedule;    // bucketed
  BucketSchedule unbucketed;  // one step per bucket

  std::vector<const Plan*> Ptrs() const {
    std::vector<const Plan*> out;
    for (const Plan& p : plans) out.push_back(&p);
    return out;
  }
  // What ranks run, bucketed or tensor by tensor.
  executor::BatchWork Work(bool bucketed) const {
    return {plans, bucketed ? schedule : unbucketed, bucketed,
            std::vector<std::string>(plans.size(), "t"), false};
  }
};

constexpr DType kDtypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                             DType::kFloat16, DType::kInt32,   DType::kInt64};

// A few layout changes shared by many tensors of uneven shapes and mixed
// dtypes, as a model's weights move.
BatchCase RandomBatch(std::mt19937_64& rng) {
  BatchCase c{testing::RandomSmallMesh(rng), {}, {}, {}};
  const PlanOptions options = testing::RandomOptions(rng);
  const int tensors = std::uniform_int_distribution<int>(1, 24)(rng);
  std::vector<std::tuple<int, DistState, DistState>> layouts;
  for (int l = std::uniform_int_distribution<int>(1, 3)(rng); l > 0; --l) {
    const int rank = std::uniform_int_distribution<int>(1, 3)(rng);
    layouts.emplace_back(rank, testing::RandomState(rng, c.mesh, rank),
                         testing::RandomState(rng, c.mesh, rank));
  }
  for (int attempt = 0;
       attempt < 4 * tensors && static_cast<int>(c.plans.size()) < tensors;
       ++attempt) {
    const auto& [rank, src, dst] = layouts[rng() % layouts.size()];
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d) shape.push_back(1 + rng() % 9);
    const TensorSpec tensor = *TensorSpec::Create(shape, kDtypes[rng() % 6]);
    absl::StatusOr<Plan> plan = MakePlan(c.mesh, {tensor, src, dst, options});
    if (plan.ok()) c.plans.push_back(*std::move(plan));
  }
  const int64_t cap = rng() % 2 ? kDefaultBucketBytes : 1 + rng() % 1024;
  const CostOptions cost{options.cost_model, options.devices_per_host};
  c.schedule = *ScheduleBuckets(c.mesh, c.Ptrs(), {cap, cost});
  c.unbucketed = UnbucketedSchedule(c.mesh, c.Ptrs(), cost);
  return c;
}

// How the host waits compare with what the device path promises: for
// each of the cases' runs (two per case, two executions each), one wait
// per execution, and one wait for collectives per execution (not per
// bucket) plus one for the digest exchange and one per tensor's
// validation. "" when they agree.
std::string WrongWaits(const std::vector<const BatchCase*>& cases,
                       const testing::RecordingSpace& space,
                       const testing::SpaceCheckingProvider& checked) {
  const int64_t waits = 4 * static_cast<int64_t>(cases.size());
  if (space.synchronizations() != waits) {
    return absl::StrCat("waited ", space.synchronizations(), " times, not ",
                        waits);
  }
  int64_t drains = 0;
  for (const BatchCase* c : cases) {
    drains += 2 * ((c->mesh.world_size() > 1 ? 1 : 0) + 2 +
                   static_cast<int64_t>(c->plans.size()));
  }
  if (checked.drains() != drains) {
    return absl::StrCat("waited for collectives ", checked.drains(),
                        " times, not ", drains);
  }
  return "";
}

// Runs every batch on `world` processes, bucketed then tensor by tensor
// (with `tables`, every copy from the device copy tables, on host memory,
// and every collective given the space's buffers only); returns
// reports[batch][mode][position]. Each rank also checks its waits
// (WrongWaits).
using Reports = std::vector<std::vector<std::vector<RankReport>>>;
Reports RunOnRanks(const std::vector<const BatchCase*>& cases, int world,
                   bool tables) {
  const auto dir = *executor::RendezvousDir::Create("reshard-batch");
  auto body = [&](int rank) {
    auto store = std::make_shared<executor::FileStore>(dir->path());
    executor::GlooOptions options;
    options.timeout = std::chrono::seconds(30);
    executor::GlooCommunicatorProvider provider(store, "batch", rank, options);
    testing::RecordingSpace space;
    testing::SpaceCheckingProvider checked(&provider, &space);
    executor::CommunicatorProvider& used =
        tables ? static_cast<executor::CommunicatorProvider&>(checked)
               : provider;
    std::string out;
    for (const BatchCase* c : cases) {
      for (bool bucketed : {true, false}) {
        executor::HarnessOptions harness;
        harness.iters = 1;
        harness.warmup = 1;
        executor::RunOptions run;
        if (tables) run.space = &space;
        executor::AppendBlob(
            out, executor::SerializeReport(executor::RunGenerated(
                     c->mesh, c->Work(bucketed), rank, used, run, harness)));
      }
    }
    const std::string waits = tables ? WrongWaits(cases, space, checked) : "";
    return waits.empty() ? out : waits;
  };
  absl::StatusOr<std::vector<executor::ChildResult>> children =
      executor::RunLocalRanks(world, body, std::chrono::minutes(5));
  EXPECT_TRUE(children.ok()) << children.status();
  Reports reports(cases.size(), std::vector<std::vector<RankReport>>(
                                    2, std::vector<RankReport>(world)));
  for (int r = 0; children.ok() && r < world; ++r) {
    EXPECT_EQ((*children)[r].exit_code, 0) << "rank " << r;
    EXPECT_FALSE(absl::StartsWith((*children)[r].output, "waited"))
        << "rank " << r << ": " << (*children)[r].output;
    executor::ReportReader in((*children)[r].output);
    std::string blob;
    for (size_t i = 0; i < cases.size(); ++i) {
      for (int mode = 0; mode < 2 && in.Blob(blob); ++mode) {
        absl::StatusOr<RankReport> report = executor::ParseReport(blob);
        EXPECT_TRUE(report.ok()) << report.status();
        if (!report.ok()) continue;
        reports[i][mode][cases[i]->mesh.PositionOfRank(report->rank)] =
            *std::move(report);
      }
    }
  }
  return reports;
}

void CheckMode(const BatchCase& c, const std::vector<RankReport>& got,
               bool bucketed) {
  SCOPED_TRACE(bucketed ? "bucketed" : "tensor by tensor");
  const size_t rows = (bucketed ? c.schedule : c.unbucketed).buckets.size();
  for (int64_t p = 0; p < c.mesh.world_size(); ++p) {
    const RankReport& r = got[p];
    ASSERT_TRUE(r.status.ok()) << "position " << p << ": " << r.status;
    ASSERT_EQ(r.seconds_median.size(), rows);
    // Each row's one timed execution (the warm-up is not reported).
    ASSERT_EQ(r.seconds.size(), rows);
    for (const std::vector<double>& each : r.seconds) {
      ASSERT_EQ(each.size(), 1u);
    }
    ASSERT_EQ(r.tensors.size(), c.plans.size());
    for (size_t t = 0; t < c.plans.size(); ++t) {
      const Plan& plan = c.plans[t];
      EXPECT_TRUE(r.tensors[t].validated)
          << "tensor " << t << " position " << p << ": "
          << r.tensors[t].validation_error;
      EXPECT_EQ(r.tensors[t].checksum,
                testing::ExpectedChecksum(c.mesh, plan.tensor, plan.dst, p))
          << "tensor " << t << " position " << p;
    }
  }
  testing::ExpectPlannedPeak(got,
                             (bucketed ? c.schedule : c.unbucketed).peak_bytes);
  const executor::RunSummary summary =
      executor::Summarize(c.mesh, c.Work(bucketed), got);
  EXPECT_TRUE(summary.validated) << summary.why_not;
  EXPECT_EQ(summary.rows.size(), rows);
}

// Counts what the corpus exercised: ops, multi-member buckets, buckets
// mixing dtypes.
struct Coverage {
  std::map<StepOp, int> ops;
  int multi_member_reductions = 0;
  int mixed_dtype_buckets = 0;

  void Add(const BatchCase& c) {
    for (const Plan& p : c.plans) {
      for (const Step& s : p.steps) ++ops[s.op];
    }
    for (const Bucket& b : c.schedule.buckets) {
      std::set<DType> dtypes;
      for (const BucketMember& m : b.members) {
        dtypes.insert(c.plans[m.tensor].tensor.dtype());
      }
      multi_member_reductions += b.Reduces() && b.members.size() > 1;
      mixed_dtype_buckets += dtypes.size() > 1;
    }
  }
  bool Complete() const {
    return ops.size() == 7 && multi_member_reductions > 0 &&
           mixed_dtype_buckets > 0;
  }
};

// `total` random batches from `seed` (growing until they cover every op,
// within 120), run and checked in both modes.
void RunAndCheck(uint64_t seed, int total, bool tables) {
  std::mt19937_64 rng(seed);
  std::vector<BatchCase> cases;
  Coverage coverage;
  for (int i = 0; i < 120 && (i < total || !coverage.Complete()); ++i) {
    cases.push_back(RandomBatch(rng));
    coverage.Add(cases.back());
  }
  std::map<int64_t, std::vector<const BatchCase*>> by_world;
  std::map<int64_t, std::vector<int>> indices;
  for (size_t i = 0; i < cases.size(); ++i) {
    by_world[cases[i].mesh.world_size()].push_back(&cases[i]);
    indices[cases[i].mesh.world_size()].push_back(static_cast<int>(i));
  }
  for (const auto& [world, group] : by_world) {
    const Reports reports = RunOnRanks(group, static_cast<int>(world), tables);
    for (size_t i = 0; i < group.size(); ++i) {
      SCOPED_TRACE(absl::StrCat("batch ", indices[world][i], " on ",
                                group[i]->mesh.CanonicalText(true), ", ",
                                group[i]->plans.size(), " tensors"));
      CheckMode(*group[i], reports[i][0], true);
      CheckMode(*group[i], reports[i][1], false);
      if (::testing::Test::HasFailure()) return;
    }
  }
  for (StepOp op : {StepOp::kAllGather, StepOp::kAllReduce,
                    StepOp::kReduceScatter, StepOp::kAllToAll, StepOp::kChunk,
                    StepOp::kPartition, StepOp::kShardToPartial}) {
    EXPECT_GT(coverage.ops.count(op), 0u) << StepOpName(op);
  }
  EXPECT_GT(coverage.multi_member_reductions, 0);
  EXPECT_GT(coverage.mixed_dtype_buckets, 0);
}

TEST(BatchRunnerTest, RandomBatchesValidateBucketedAndTensorByTensor) {
  // A scaled-down corpus (RESHARD_PROPERTY_CASES_DIVISOR) still grows
  // until it covers every op, within the full corpus' size.
  RunAndCheck(1414, testing::ScaledCases(120), false);
}

// The device path's logic: every copy from the tables a GPU runs, one wait
// per execution.
TEST(BatchRunnerTest, RandomBatchesThroughDeviceCopyTablesValidate) {
  RunAndCheck(1415, testing::ScaledCases(40), true);
}

TEST(BatchRunnerTest, GroupMembersAgreeOnEveryPackedBlock) {
  std::mt19937_64 rng(77);
  for (int i = 0; i < testing::ScaledCases(300); ++i) {
    const BatchCase c = RandomBatch(rng);
    const std::vector<const Plan*> plans = c.Ptrs();
    for (const Bucket& b : c.schedule.buckets) {
      for (int64_t p = 0; p < c.mesh.world_size(); ++p) {
        const BucketLayout mine = MakeBucketLayout(c.mesh, b, plans, p);
        // The schedule's bytes are the largest rank's packed buffer, which
        // position 0 holds (part 0 of every split is the largest).
        const WireBlocks w = CollectiveWireBlocks(b.op, mine.group_size);
        const int64_t buffer = std::max(w.in, w.out) * mine.block_bytes;
        ASSERT_LE(buffer, b.bytes);
        if (p == 0) {
          ASSERT_EQ(buffer, b.bytes);
        }
        for (int64_t q : c.mesh.GroupPositions(p, b.group)) {
          const BucketLayout theirs = MakeBucketLayout(c.mesh, b, plans, q);
          ASSERT_EQ(theirs.block_bytes, mine.block_bytes);
          ASSERT_EQ(theirs.offsets, mine.offsets);
        }
      }
    }
  }
}

// A provider that must not be reached.
class NoProvider : public executor::CommunicatorProvider {
 public:
  absl::StatusOr<executor::Communicator*> Get(const std::vector<int64_t>&,
                                              absl::string_view) override {
    ADD_FAILURE() << "a communicator was asked for";
    return absl::InternalError("no communicators here");
  }
};

TEST(BatchRunnerTest, SchedulesThatDoNotFitAreRefusedBeforeAnyCommunicator) {
  const Mesh mesh = testing::MakeMesh({2, 2});
  std::vector<Plan> plans;
  for (const char* src : {"S(0),R", "P(sum),R"}) {
    plans.push_back(*MakePlan(
        mesh, *ParsePlanRequest(mesh, {8, 4}, "f32", src, "R,R", {})));
  }
  std::vector<const Plan*> ptrs = {&plans[0], &plans[1]};
  const BucketSchedule good = *ScheduleBuckets(mesh, ptrs, {});
  ASSERT_EQ(good.buckets.size(), 2u);
  struct Case {
    const char* message;
    std::function<void(BucketSchedule&)> mutate;
  };
  const Case cases[] = {
      {"buckets[0].members[0]: tensor 5 is not planned",
       [](auto& s) { s.buckets[0].members[0].tensor = 5; }},
      {"buckets[0].members[0]: step 3 is not a communicating step",
       [](auto& s) { s.buckets[0].members[0].step = 3; }},
      {"buckets[1].members[1]: its step does not match the bucket's op, "
       "group, reduction or dtype",
       [](auto& s) {
         s.buckets[1].members.push_back({0, 0});
       }},
      {"buckets[1].members[1]: step 0 of tensor 1 is out of its order",
       [](auto& s) {
         s.buckets[1].members.push_back({1, 0});
       }},
      {"tensors[1]: 0 of its 1 communicating steps are scheduled",
       [](auto& s) { s.buckets.pop_back(); }},
      {"buckets[1]: no members", [](auto& s) { s.buckets[1].members.clear(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    BucketSchedule bad = good;
    c.mutate(bad);
    NoProvider provider;
    auto runner = executor::BatchRunner::Compile(mesh, plans, bad, 0, provider);
    EXPECT_EQ(runner.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(runner.status().message(), c.message);
  }
  NoProvider provider;
  auto runner = executor::BatchRunner::Compile(mesh, plans, good, 9, provider);
  EXPECT_EQ(runner.status().message(), "rank: 9 is not a rank of the mesh");
}

TEST(BatchRunnerTest, RanksWithDifferentSchedulesRefuseByDigest) {
  const Mesh mesh = testing::MakeMesh({2});
  std::vector<Plan> plans;
  for (int i = 0; i < 3; ++i) {
    plans.push_back(
        *MakePlan(mesh, *ParsePlanRequest(mesh, {64}, "f32", "S(0)", "R", {})));
  }
  std::vector<const Plan*> ptrs = {&plans[0], &plans[1], &plans[2]};
  const BucketSchedule one = *ScheduleBuckets(mesh, ptrs, {});
  const BucketSchedule each = UnbucketedSchedule(mesh, ptrs, {});
  const auto dir = *executor::RendezvousDir::Create("reshard-batch-digest");
  auto body = [&](int rank) {
    auto store = std::make_shared<executor::FileStore>(dir->path());
    executor::GlooOptions options;
    options.timeout = std::chrono::seconds(20);
    executor::GlooCommunicatorProvider provider(store, "d", rank, options);
    auto runner = executor::BatchRunner::Compile(
        mesh, plans, rank == 0 ? one : each, rank, provider);
    return std::string(runner.status().message());
  };
  auto children = executor::RunLocalRanks(2, body, std::chrono::minutes(1));
  ASSERT_TRUE(children.ok());
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE((*children)[r].output.find(absl::StrCat(
                  "batch digest mismatch: rank ", r, " runs batch")),
              std::string::npos)
        << (*children)[r].output;
    EXPECT_NE((*children)[r].output.find(absl::StrCat(
                  "but ranks [", 1 - r, "] run a different batch")),
              std::string::npos);
  }
}

}  // namespace
}  // namespace reshard
