// Cross-mesh plans (docs/DESIGN.md §9) run by CrossRunner on real Gloo
// ranks, each its own process: random pairs of the planner's property
// generator (disjoint, overlapping, nested and permuted rank maps, every
// dtype, Partial sources and destinations), every destination rank's
// result equal to its block of g element by element after the validation
// collective, with §6.2's checksum computed here independently; a rank
// that is only a source reports no tensor. A rank given another layout
// stops every rank before any data moves, naming it.
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/judge/cross_harness.h"
#include "executor/launch/local_launch.h"
#include "executor/stores/file_store.h"
#include "executor/stores/rendezvous_dir.h"
#include "gtest/gtest.h"
#include "planner/cross/cross_planner.h"
#include "tests/executor/executor_cases.h"
#include "tests/planner/cross_pairs.h"

namespace reshard {
namespace {

using executor::RankReport;

constexpr int kRandomPlans = 160;  // in CI; RESHARD_CROSS_PLANS for a bench run
constexpr int64_t kMaxRunRanks = 8;  // processes on a 2-core machine

struct CrossCase {
  testing::Pair pair;
  CrossMeshPlan plan;
  int64_t ranks = 0;  // the union of both rank maps: 0..ranks-1
};

int64_t RunRanks(const testing::Pair& p) {
  int64_t top = 0;
  for (const Mesh* mesh : {&p.src_mesh, &p.dst_mesh}) {
    for (int64_t q = 0; q < mesh->world_size(); ++q) {
      top = std::max(top, mesh->RankAt(q));
    }
  }
  return top + 1;
}

// Random pairs on at most kMaxRunRanks ranks, each with a random dtype.
std::vector<CrossCase> RandomCases(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const DType dtypes[] = {DType::kFloat32, DType::kBFloat16, DType::kFloat16,
                          DType::kFloat64, DType::kInt32,    DType::kInt64};
  std::vector<CrossCase> cases;
  while (static_cast<int>(cases.size()) < count) {
    testing::Pair p = testing::RandomPair(rng);
    if (RunRanks(p) > kMaxRunRanks) continue;
    p.request.tensor =
        *TensorSpec::Create(p.request.tensor.shape(), dtypes[rng() % 6]);
    absl::StatusOr<CrossMeshPlan> plan =
        MakeCrossMeshPlan(p.src_mesh, p.dst_mesh, p.request);
    EXPECT_TRUE(plan.ok()) << plan.status() << "\n" << testing::Describe(p);
    if (!plan.ok()) continue;
    const int64_t ranks = RunRanks(p);
    cases.push_back({std::move(p), *std::move(plan), ranks});
  }
  return cases;
}

// Runs `cases` (all on `world` ranks) on `world` processes, in order, each
// rank reusing its communicators; `plan_of(rank, case)` is the plan that
// rank runs. Returns reports[case][rank].
std::vector<std::vector<RankReport>> RunOnRanks(
    const std::vector<const CrossCase*>& cases, int world,
    const std::function<const CrossMeshPlan&(int, const CrossCase&)>& plan_of,
    std::chrono::milliseconds timeout) {
  const auto dir = *executor::RendezvousDir::Create("reshard-cross");
  auto body = [&](int rank) {
    auto store = std::make_shared<executor::FileStore>(dir->path());
    executor::GlooOptions options;
    options.timeout = timeout;
    executor::GlooCommunicatorProvider provider(store, "cross", rank, options);
    std::string out;
    for (const CrossCase* c : cases) {
      executor::HarnessOptions harness;
      out +=
          testing::Frame(executor::SerializeReport(executor::RunCrossGenerated(
              {c->pair.src_mesh, c->pair.dst_mesh, plan_of(rank, *c)}, rank,
              provider, {}, harness)));
    }
    return out;
  };
  return testing::RunCaseRanks(world, cases.size(), body,
                               [](size_t, int r) { return int64_t{r}; });
}

const CrossMeshPlan& OwnPlan(int, const CrossCase& c) { return c.plan; }

void CheckCase(const CrossCase& c, const std::vector<RankReport>& reports) {
  SCOPED_TRACE(testing::Describe(c.pair));
  const Mesh& dst = c.pair.dst_mesh;
  for (int64_t rank = 0; rank < c.ranks; ++rank) {
    const RankReport& r = reports[rank];
    ASSERT_TRUE(r.status.ok()) << "rank " << rank << ": " << r.status;
    const int64_t position = dst.PositionOfRank(rank);
    if (position < 0) {
      EXPECT_TRUE(r.tensors.empty()) << "source-only rank " << rank;
      continue;
    }
    ASSERT_EQ(r.tensors.size(), 1u) << "rank " << rank;
    EXPECT_TRUE(r.tensors[0].validated)
        << "rank " << rank << ": " << r.tensors[0].validation_error;
    EXPECT_EQ(
        r.tensors[0].checksum,
        testing::ExpectedChecksum(dst, c.plan.tensor, c.plan.dst, position))
        << "rank " << rank;
  }
}

TEST(CrossRunnerTest, RandomPlansOnProcessesValidateOnEveryDestination) {
  // A recorded bench run asks for more, with another seed:
  // RESHARD_CROSS_PLANS=480 RESHARD_CROSS_SEED=7 build/tests/cross_runner_test
  const char* plans = std::getenv("RESHARD_CROSS_PLANS");
  const char* seed = std::getenv("RESHARD_CROSS_SEED");
  const int count = plans != nullptr ? std::atoi(plans) : kRandomPlans;
  const std::vector<CrossCase> cases = RandomCases(
      seed != nullptr ? std::strtoull(seed, nullptr, 10) : 20261207, count);
  std::map<int64_t, std::vector<const CrossCase*>> by_world;
  for (const CrossCase& c : cases) by_world[c.ranks].push_back(&c);
  int transfers = 0, with_pre = 0, with_post = 0;
  for (const auto& [world, group] : by_world) {
    const std::vector<std::vector<RankReport>> reports = RunOnRanks(
        group, static_cast<int>(world), OwnPlan, std::chrono::seconds(30));
    for (size_t i = 0; i < group.size(); ++i) {
      CheckCase(*group[i], reports[i]);
      transfers += static_cast<int>(group[i]->plan.transfers.size());
      with_pre += !group[i]->plan.pre.steps.empty();
      with_post += !group[i]->plan.post.steps.empty();
    }
  }
  // The generator reaches both roles' steps.
  EXPECT_GT(with_pre, 10);
  EXPECT_GT(with_post, 10);
  EXPECT_GT(transfers, count);
  std::cout << cases.size() << " plans run, " << transfers << " transfers, "
            << with_pre << " with pre-steps, " << with_post
            << " with post-steps\n";
}

// Every rank of a run where rank 1 was given other work stopped at
// Compile, before any data moved: rank 1 names rank 0, the others rank 1.
void ExpectStoppedNamingRank1(const std::vector<RankReport>& reports) {
  for (const RankReport& r : reports) {
    EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition)
        << "rank " << r.rank << ": " << r.status;
    EXPECT_TRUE(absl::StrContains(
        r.status.message(), r.rank == 1 ? "rank 0 runs a plan for another "
                                        : "rank 1 runs a plan for another"))
        << r.status;
    EXPECT_TRUE(absl::StrContains(r.status.message(), "no data was moved"));
    EXPECT_EQ(r.executions_done, 0);
  }
}

// A batch on one pair's meshes: 2-6 tensors of random dtypes, some with
// their own source mesh (a pipeline stage: some of the source's ranks in
// another shape), tensor 0 always on the pair's source mesh so that every
// rank of the pair plays; a random exchange bound (one byte: a tensor per
// exchange).
struct CrossBatchCase {
  testing::Pair pair;
  std::vector<executor::CrossWork> items;
  int64_t exchange_bytes = 0;
  int64_t ranks = 0;
};

std::vector<CrossBatchCase> RandomBatches(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const DType dtypes[] = {DType::kFloat32, DType::kBFloat16, DType::kInt64};
  const int64_t bounds[] = {1, 96, 1024, std::numeric_limits<int64_t>::max()};
  std::vector<CrossBatchCase> cases;
  while (static_cast<int>(cases.size()) < count) {
    CrossBatchCase c{testing::RandomPair(rng)};
    c.ranks = RunRanks(c.pair);
    if (c.ranks > kMaxRunRanks) continue;
    c.exchange_bytes = bounds[rng() % 4];
    const int n = 2 + static_cast<int>(rng() % 5);
    const Mesh& src = c.pair.src_mesh;
    for (int t = 0; t < n; ++t) {
      Mesh own = src;
      if (t > 0 && rng() % 3 == 0) {
        const int64_t m = 1 + static_cast<int64_t>(rng() % src.world_size());
        std::vector<int64_t> ranks;
        for (int64_t q = 0; q < m; ++q) ranks.push_back(src.RankAt(q));
        own = testing::MeshOf(rng, testing::Factorize(rng, m), ranks, "ABC");
      }
      CrossMeshRequest r = testing::RandomRequest(rng, own, c.pair.dst_mesh);
      r.tensor = *TensorSpec::Create(r.tensor.shape(), dtypes[rng() % 3]);
      absl::StatusOr<CrossMeshPlan> plan =
          MakeCrossMeshPlan(own, c.pair.dst_mesh, r);
      EXPECT_TRUE(plan.ok()) << plan.status();
      if (plan.ok()) {
        c.items.push_back({std::move(own), c.pair.dst_mesh, *std::move(plan)});
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

using ItemsOf =
    std::function<std::vector<executor::CrossWork>(int, const CrossBatchCase&)>;

std::vector<executor::CrossWork> OwnItems(int, const CrossBatchCase& c) {
  return c.items;
}

// Runs `cases` (all on `world` ranks) on `world` processes, in order;
// `items_of(rank, case)` is the batch that rank runs.
std::vector<std::vector<RankReport>> RunBatchesOnRanks(
    const std::vector<const CrossBatchCase*>& cases, int world,
    const ItemsOf& items_of = OwnItems) {
  const auto dir = *executor::RendezvousDir::Create("reshard-cross-batch");
  auto body = [&](int rank) {
    auto store = std::make_shared<executor::FileStore>(dir->path());
    executor::GlooOptions options;
    options.timeout = std::chrono::seconds(30);
    executor::GlooCommunicatorProvider provider(store, "cross", rank, options);
    std::string out;
    for (const CrossBatchCase* c : cases) {
      executor::HarnessOptions harness;
      harness.iters = 2;  // a second run reuses every buffer
      out += testing::Frame(
          executor::SerializeReport(executor::RunCrossBatchGenerated(
              items_of(rank, *c), c->exchange_bytes, rank, provider, {},
              harness)));
    }
    return out;
  };
  return testing::RunCaseRanks(world, cases.size(), body,
                               [](size_t, int r) { return int64_t{r}; });
}

TEST(CrossRunnerTest, RandomBatchesValidateEveryTensorOnEveryDestination) {
  const std::vector<CrossBatchCase> cases = RandomBatches(20261208, 40);
  std::map<int64_t, std::vector<const CrossBatchCase*>> by_world;
  for (const CrossBatchCase& c : cases) by_world[c.ranks].push_back(&c);
  int tensors = 0, own_meshes = 0, shared_posts = 0;
  for (const auto& [world, group] : by_world) {
    const auto reports = RunBatchesOnRanks(group, static_cast<int>(world));
    for (size_t i = 0; i < group.size(); ++i) {
      const CrossBatchCase& c = *group[i];
      SCOPED_TRACE(testing::Describe(c.pair));
      const Mesh& dst = c.pair.dst_mesh;
      for (int64_t rank = 0; rank < c.ranks; ++rank) {
        const RankReport& r = reports[i][rank];
        ASSERT_TRUE(r.status.ok()) << "rank " << rank << ": " << r.status;
        const int64_t position = dst.PositionOfRank(rank);
        ASSERT_EQ(r.tensors.size(), position < 0 ? 0u : c.items.size())
            << "rank " << rank;
        for (size_t t = 0; t < r.tensors.size(); ++t) {
          const CrossMeshPlan& plan = c.items[t].plan;
          EXPECT_TRUE(r.tensors[t].validated)
              << "rank " << rank << " tensor " << t << ": "
              << r.tensors[t].validation_error;
          EXPECT_EQ(
              r.tensors[t].checksum,
              testing::ExpectedChecksum(dst, plan.tensor, plan.dst, position))
              << "rank " << rank << " tensor " << t;
        }
      }
      tensors += static_cast<int>(c.items.size());
      int with_post = 0;
      for (const auto& item : c.items)
        with_post += !item.plan.post.steps.empty();
      shared_posts += with_post >= 2;
      for (const auto& item : c.items) {
        own_meshes += !(item.src_mesh == c.pair.src_mesh);
      }
    }
  }
  EXPECT_GT(own_meshes, 10);   // the generator reaches pipeline stages
  EXPECT_GT(shared_posts, 3);  // and post-steps run as one batch
  std::cout << cases.size() << " batches run, " << tensors << " tensors, "
            << own_meshes << " on their own source mesh, " << shared_posts
            << " with several tensors' post-steps\n";
}

// Rank 1 runs the batch without its last tensor: every rank fails at
// Compile, naming rank 1 (or, on rank 1, rank 0), before any data moves.
TEST(CrossRunnerTest, ABatchOfOtherTensorsStopsEveryRankNamingIt) {
  std::vector<CrossBatchCase> cases = RandomBatches(11, 20);
  const CrossBatchCase* chosen = nullptr;
  for (const CrossBatchCase& c : cases) {
    if (c.ranks >= 3 && c.items.size() >= 3) chosen = &c;
  }
  ASSERT_NE(chosen, nullptr);
  const auto reports =
      RunBatchesOnRanks({chosen}, static_cast<int>(chosen->ranks),
                        [](int rank, const CrossBatchCase& c) {
                          std::vector<executor::CrossWork> items = c.items;
                          if (rank == 1) items.pop_back();
                          return items;
                        });
  ExpectStoppedNamingRank1(reports[0]);
}

// Rank 1 runs a plan whose layout digest differs: every rank fails at
// Compile, naming rank 1, before any data moves.
TEST(CrossRunnerTest, ALayoutDigestMismatchStopsEveryRankNamingIt) {
  std::vector<CrossCase> cases = RandomCases(7, 40);
  const CrossCase* chosen = nullptr;
  for (const CrossCase& c : cases) {
    if (c.ranks >= 3) chosen = &c;
  }
  ASSERT_NE(chosen, nullptr);
  CrossMeshPlan other = chosen->plan;
  other.layout_digest ^= 1;
  const auto reports = RunOnRanks(
      {chosen}, static_cast<int>(chosen->ranks),
      [&](int rank, const CrossCase& c) -> const CrossMeshPlan& {
        return rank == 1 ? other : c.plan;
      },
      std::chrono::seconds(30));
  ExpectStoppedNamingRank1(reports[0]);
}

}  // namespace
}  // namespace reshard
