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
  for (int64_t rank = 0; rank < chosen->ranks; ++rank) {
    const RankReport& r = reports[0][rank];
    EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition)
        << "rank " << rank << ": " << r.status;
    EXPECT_TRUE(absl::StrContains(r.status.message(),
                                  rank == 1 ? "rank 0 runs a plan for another "
                                            : "rank 1 runs a plan for another"))
        << r.status;
    EXPECT_TRUE(absl::StrContains(r.status.message(), "no data was moved"));
    EXPECT_EQ(r.executions_done, 0);
  }
}

}  // namespace
}  // namespace reshard
