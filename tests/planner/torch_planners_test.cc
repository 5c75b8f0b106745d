// torch_greedy, torch_graph and the merge post-pass reproduce PyTorch's
// plans step for step (docs/DESIGN.md §3.1; docs/PLAN_JSON.md, "Following
// the pin"), refuse what PyTorch cannot plan, and warn as specified.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "reference/plan_check.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;
using testing::Ops;

absl::StatusOr<Plan> Plan1(const Mesh& mesh, std::vector<int64_t> shape,
                           const std::string& src, const std::string& dst,
                           PlannerKind planner = PlannerKind::kTorchGreedy,
                           bool merge = false,
                           CostModelKind model = CostModelKind::kTorch) {
  return testing::PlanChecked(mesh, std::move(shape), src, dst,
                              {planner, model, merge});
}

TEST(TorchGreedyTest, PassOneWalksInnerToOuter) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {8, 8}, "P(sum),S(0),P(sum)", "R,R,R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_reduce(C) all_gather(B) all_reduce(A)");
  EXPECT_EQ(PlanTrace(*plan), "P(sum)S(0)P(sum)->P(sum)S(0)R->P(sum)RR->RRR");
}

TEST(TorchGreedyTest, MultiDimShardToShardGoesThroughReplicate) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {8, 8, 8}, "S(0),S(0),S(0)", "S(1),S(1),S(1)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan),
            "all_gather(C) all_gather(B) all_to_all(A) chunk(B) chunk(C)");
}

TEST(TorchGreedyTest, SingleAllToAllForInnerReshard) {
  const Mesh mesh = MakeMesh({2, 2});
  absl::StatusOr<Plan> plan = Plan1(mesh, {8, 8, 8}, "S(1),S(1)", "S(1),S(2)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_to_all(B)");
}

TEST(TorchGreedyTest, NoShardsMeansAscendingOrder) {
  const Mesh mesh = MakeMesh({2, 2});
  absl::StatusOr<Plan> plan = Plan1(mesh, {8}, "P(sum),P(sum)", "S(0),R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "reduce_scatter(A) all_reduce(B)");
}

TEST(TorchGreedyTest, RefusesWhatPyTorchCannotDo) {
  const Mesh mesh = MakeMesh({2});
  absl::StatusOr<Plan> plan = Plan1(mesh, {4}, "P(sum)", "P(avg)");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("P(sum) to P(avg)"), std::string::npos)
      << plan.status();
  plan = Plan1(mesh, {4}, "S(0)", "P(max)");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("S(0) to P(max)"), std::string::npos);
  // The pin's executor zero-fills S -> P(sum) locally: that one runs.
  plan = Plan1(mesh, {4}, "S(0)", "P(sum)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "shard_to_partial(A)");
  plan = Plan1(mesh, {4}, "S(0)", "P(avg)");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find(absl::StrCat(
                "PyTorch ", kTorchVersion,
                "'s greedy planner plans it, but its executor refuses "
                "(\"redistribute from Shard(dim=0) to Partial(avg) not "
                "supported yet\")")),
            std::string::npos)
      << plan.status();
  // On a size-1 dim its executor skips the transform; the public API's
  // refusal is the reason then.
  const Mesh unit = MakeMesh({1, 2});
  plan = Plan1(unit, {4}, "S(0),R", "P(avg),R");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(plan.status().message(),
            absl::StrCat("torch_greedy: PyTorch cannot redistribute S(0) to "
                         "P(avg) on mesh dim 0: PyTorch ",
                         kTorchVersion,
                         "'s greedy planner plans it (its executor skips a "
                         "size-1 mesh dim), but DTensor.redistribute refuses "
                         "it (\"Can not redistribute from S(0) to P(avg), "
                         "only Shard to Partial(sum) redistribution is "
                         "supported!\"); use the optimal planner"));
}

// PyTorch hands non-default shard orders to its graph planner, and
// the plan says which planner made it.
TEST(TorchGreedyTest, NonDefaultOrderPlansWithTheGraphPlanner) {
  const Mesh mesh = MakeMesh({2, 2});
  absl::StatusOr<Plan> greedy = Plan1(mesh, {8}, "S(0)[1]S(0)[0]", "R,R");
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  EXPECT_EQ(greedy->planner, PlannerKind::kTorchGraph);
  absl::StatusOr<Plan> graph =
      Plan1(mesh, {8}, "S(0)[1]S(0)[0]", "R,R", PlannerKind::kTorchGraph);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // Stack discipline: mesh dim 0 was applied last, so it is gathered first.
  EXPECT_EQ(Ops(mesh, *graph), "all_gather(A) all_gather(B)");
  EXPECT_EQ(Ops(mesh, *greedy), Ops(mesh, *graph));
  // Default orders stay greedy's own.
  absl::StatusOr<Plan> plain = Plan1(mesh, {8}, "S(0),S(0)", "R,R");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->planner, PlannerKind::kTorchGreedy);
}

TEST(TorchGraphTest, TiesBreakInGenerationOrder) {
  const Mesh mesh = MakeMesh({2, 2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {8}, "P(sum),P(sum)", "R,R", PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(PlanTrace(*plan), "P(sum)P(sum)->RP(sum)->RR");
  EXPECT_GT(plan->states_expanded, 0);
}

TEST(TorchGraphTest, PrefersAllToAllOnlyWhenCheaper) {
  // S->S costs ag(B)+1.0 µs (PyTorch's penalty), S->R ag(B*n): small
  // tensors gather and chunk, large ones use one all_to_all.
  const Mesh mesh = MakeMesh({4});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {8, 8}, "S(0)", "S(1)", PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_gather(A) chunk(A)");
  plan = Plan1(mesh, {4096, 4096}, "S(0)", "S(1)", PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_to_all(A)");
}

TEST(TorchGraphTest, PlansPartialConversionsThroughReplicate) {
  const Mesh mesh = MakeMesh({2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {4}, "P(sum)", "P(avg)", PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_reduce(A) partition(A)");
}

// The pin's graph offers S -> P(sum) at no cost, but only where the
// destination holds P(sum): towards P(avg) it still goes through R.
TEST(TorchGraphTest, ShardToPartialOnlyTowardsASumDestination) {
  const Mesh mesh = MakeMesh({2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {4}, "S(0)", "P(sum)", PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "shard_to_partial(A)");
  plan = Plan1(mesh, {4}, "S(0)", "P(avg)", PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_gather(A) partition(A)");
}

// Zero-cost and destination-directed, the edge makes a chunk then a
// zero-fill cheaper than partitioning R into P(sum) (PyTorch's own answer).
TEST(TorchGraphTest, ChunksThenZeroFillsTowardsPartialSum) {
  const Mesh mesh = MakeMesh({2, 3});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {6, 9}, "R,S(1)", "P(sum),R", PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "chunk(A) all_gather(B) shard_to_partial(A)");
}

// PyTorch's greedy planner steps into P(avg),P(max), whose value depends on
// the order its reductions run in; Reshard holds no such state.
TEST(TorchGreedyTest, RefusesStatesThatMixMaxWithAnotherPartial) {
  const Mesh mesh = MakeMesh({2, 2});
  absl::StatusOr<Plan> plan = Plan1(mesh, {4}, "R,P(max)", "P(avg),R");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find(
                "torch_greedy: PyTorch's plan passes through P(avg),P(max), "
                "which mixes Partial ops other than sum/avg"),
            std::string::npos)
      << plan.status();
}

// PyTorch's graph takes S -> P(sum) beside P(max) (edge 7 does not skip
// forbidden mixes there); Reshard's skips it, as docs/DESIGN.md §3.1 says,
// and plans the best path without it.
TEST(TorchGraphTest, ZeroFillSkipsForbiddenMixes) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {4, 4}, "R,S(0),P(max)", "R,P(sum),P(sum)",
            PlannerKind::kTorchGraph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan),
            "reduce_scatter(C) shard_to_partial(C) shard_to_partial(B)");
}

TEST(MergePassTest, MergesRunsOntoRegisteredGroups) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R",
            PlannerKind::kTorchGreedy, true, CostModelKind::kAlphaBeta);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_reduce(A_C)");
  EXPECT_EQ(PlanTrace(*plan), "P(sum)RP(sum)-->RRR");
  EXPECT_TRUE(plan->warnings.empty());
}

TEST(MergePassTest, WarnsWhenTheGroupIsMissing) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R",
            PlannerKind::kTorchGreedy, true, CostModelKind::kAlphaBeta);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_reduce(A) all_reduce(C)");
  ASSERT_EQ(plan->warnings.size(), 1u);
  const Warning& w = plan->warnings[0];
  EXPECT_EQ(WarningCodeName(w.code), "missing_flattened_group");
  EXPECT_EQ(w.dims, (std::vector<std::string>{"A", "C"}));
  EXPECT_NE(w.message.find("mesh[\"A\", \"C\"]._flatten()"), std::string::npos)
      << w.message;
  // Two 10.2 µs all_reduces on 2 ranks vs one on 4: the saving is positive.
  EXPECT_GT(w.saving_us, 5.0);
}

TEST(MergePassTest, AvgAndSumMergeWithADivisor) {
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  absl::StatusOr<Plan> plan = Plan1(mesh, {16}, "P(avg),P(sum)", "R,R",
                                    PlannerKind::kTorchGreedy, true);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].reduce_op, ReduceOp::kSum);
  EXPECT_EQ(plan->steps[0].avg_divisor, 2);
}

TEST(MergePassTest, RefusesNonAscendingReduceScatter) {
  // Greedy gathers inner-first; an explicit (S1,S1)->... order run that is
  // not descending cannot merge: use torch_graph on a reversed order.
  const Mesh mesh = MakeMesh({2, 2}, {{"A", "B"}});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {8}, "S(0)[1]S(0)[0]", "R,R", PlannerKind::kTorchGraph, true);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_gather(A) all_gather(B)");
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_EQ(WarningCodeName(plan->warnings[0].code),
            "non_ascending_merge_refused");
}

TEST(MergePassTest, RefusesUnevenAllGatherUnlikePyTorch) {
  const Mesh mesh = MakeMesh({2, 2}, {{"A", "B"}});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {5, 3}, "S(0),S(0)", "R,R", PlannerKind::kTorchGreedy, true);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_gather(B) all_gather(A)");
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_EQ(WarningCodeName(plan->warnings[0].code), "uneven_merge_refused");
  EXPECT_NE(plan->warnings[0].message.find("not evenly divisible"),
            std::string::npos);
  // Even extents merge.
  plan =
      Plan1(mesh, {8, 3}, "S(0),S(0)", "R,R", PlannerKind::kTorchGreedy, true);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_gather(A_B)");
}

// Registering a group merges every run onto it, and a merge can cost more
// than the steps it replaces: on (A inter-host, B intra-host) the merged
// all_reduce runs all 30 hops at A's latency and bandwidth. PyTorch
// warns anyway; the warning never claims a saving (such as -609 us).
TEST(MergePassTest, NeverClaimsASavingFromALoss) {
  const Mesh mesh = MakeMesh({2, 8});
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{16}, std::vector<int64_t>{256, 256}}) {
    absl::StatusOr<Plan> plan =
        Plan1(mesh, shape, "P(sum),P(sum)", "R,R", PlannerKind::kTorchGreedy,
              true, CostModelKind::kAlphaBeta);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(Ops(mesh, *plan), "all_reduce(A) all_reduce(B)");
    // What registering (A, B) would do: merge, and cost more.
    const Mesh registered = MakeMesh({2, 8}, {{"A", "B"}});
    absl::StatusOr<Plan> merged =
        Plan1(registered, shape, "P(sum),P(sum)", "R,R",
              PlannerKind::kTorchGreedy, true, CostModelKind::kAlphaBeta);
    ASSERT_TRUE(merged.ok()) << merged.status();
    EXPECT_EQ(Ops(registered, *merged), "all_reduce(A_B)");
    EXPECT_GT(merged->total_time_us, plan->total_time_us);
    // PyTorch warns whatever the merge would save; the warning says
    // that it saves nothing here.
    ASSERT_EQ(plan->warnings.size(), 1u);
    const Warning& w = plan->warnings[0];
    EXPECT_EQ(w.code, WarningCode::kMissingFlattenedGroup);
    EXPECT_EQ(w.saving_us, 0);
    EXPECT_NE(w.message.find("would not save time under this cost model"),
              std::string::npos)
        << w.message;
  }
}

// The saving of registering a group is that of every run it would merge,
// and the advice is what a user can do today.
TEST(MergePassTest, MissingGroupSavingIsThatOfItsOwnRemedy) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R",
            PlannerKind::kTorchGreedy, true, CostModelKind::kAlphaBeta);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Mesh registered = MakeMesh({2, 2, 2}, {{"A", "C"}});
  absl::StatusOr<Plan> remedied =
      Plan1(registered, {16, 16}, "P(sum),R,P(sum)", "R,R,R",
            PlannerKind::kTorchGreedy, true, CostModelKind::kAlphaBeta);
  ASSERT_TRUE(remedied.ok()) << remedied.status();
  ASSERT_EQ(plan->warnings.size(), 1u);
  const Warning& w = plan->warnings[0];
  EXPECT_NEAR(w.saving_us, plan->total_time_us - remedied->total_time_us, 1e-9);
  EXPECT_NE(w.message.find("register the flattened group (\"A\", \"C\") "
                           "with the mesh (mesh.flattened; reshardctl: "
                           "--flatten A,C; PyTorch: mesh[\"A\", "
                           "\"C\"]._flatten())"),
            std::string::npos)
      << w.message;
}

// A cap holds for every planner, PyTorch's too: FAILED_PRECONDITION naming
// the plan's peak, its step and the cap.
TEST(PeakCapTest, TorchPlansAboveTheCapAreRefused) {
  const Mesh mesh = MakeMesh({4, 2}, {{"A", "B"}});
  for (PlannerKind planner :
       {PlannerKind::kTorchGreedy, PlannerKind::kTorchGraph}) {
    for (bool merge : {false, true}) {
      SCOPED_TRACE(absl::StrCat(PlannerName(planner), merge ? "+merge" : ""));
      PlanOptions options{planner, CostModelKind::kAlphaBeta, merge};
      absl::StatusOr<Plan> free_plan =
          testing::PlanChecked(mesh, {64, 64}, "S(0),S(0)", "S(1),R", options);
      ASSERT_TRUE(free_plan.ok()) << free_plan.status();
      const int64_t peak = free_plan->peak_bytes;
      options.max_peak_bytes = peak;
      EXPECT_TRUE(
          testing::PlanChecked(mesh, {64, 64}, "S(0),S(0)", "S(1),R", options)
              .ok());
      options.max_peak_bytes = peak - 1;
      absl::StatusOr<Plan> capped =
          testing::PlanChecked(mesh, {64, 64}, "S(0),S(0)", "S(1),R", options);
      EXPECT_EQ(capped.status().code(), absl::StatusCode::kFailedPrecondition);
      const std::string expected = absl::StrCat(
          "options.max_peak_bytes: the ", PlannerName(planner),
          " plan (PyTorch's planners do not plan around a memory cap; the "
          "optimal planner does) peaks at ",
          peak, " bytes per rank (steps[");
      EXPECT_TRUE(absl::StartsWith(capped.status().message(), expected))
          << capped.status();
      EXPECT_TRUE(
          absl::EndsWith(capped.status().message(),
                         absl::StrCat("above the cap of ", peak - 1, " bytes")))
          << capped.status();
    }
  }
}

// torch_graph stops at the request's budget (a fixed 2,000,000 states
// would take ~20 s and 1.85 GB on an 8-D mesh, whatever the budget).
TEST(TorchGraphTest, StopsAtTheSearchBudget) {
  const Mesh small = MakeMesh({2, 2});
  PlanOptions options{PlannerKind::kTorchGraph};
  absl::StatusOr<Plan> plan = testing::PlanChecked(
      small, {8, 8}, "S(0)[1]S(0)[0]", "S(1),P(sum)", options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const int64_t needed = plan->states_expanded;
  ASSERT_GT(needed, 1);
  options.search_budget = needed;
  plan = testing::PlanChecked(small, {8, 8}, "S(0)[1]S(0)[0]", "S(1),P(sum)",
                              options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->states_expanded, needed);
  options.search_budget = needed - 1;
  plan = testing::PlanChecked(small, {8, 8}, "S(0)[1]S(0)[0]", "S(1),P(sum)",
                              options);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(
      plan.status().message(),
      absl::StrCat("options.search_budget: torch_graph expanded ", needed - 1,
                   " states without reaching S(1),P(sum); raise the "
                   "search budget or use the optimal planner"));
  // The issue's 8-D request with a budget of 1000.
  const Mesh big = MakeMesh({2, 2, 2, 2, 2, 2, 2, 2});
  options.search_budget = 1000;
  plan = testing::PlanChecked(big, {1024, 512, 256, 64},
                              "S(0),P(sum),R,S(3),P(sum),S(1),R,S(2)",
                              "S(1),R,S(2),R,S(0),R,P(sum),R", options);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(plan.status().message().find(
                "options.search_budget: torch_graph expanded 1000 states"),
            std::string::npos)
      << plan.status();
}

// torch_graph's tables stay within --max_search_bytes too: past half of
// it, RESOURCE_EXHAUSTED naming the flag (the optimal search falls back
// there, PyTorch's planner has no fallback).
TEST(TorchGraphTest, StopsAtTheMemoryBound) {
  const Mesh big = MakeMesh({2, 2, 2, 2, 2, 2, 2, 2});
  PlanOptions options{PlannerKind::kTorchGraph};
  options.search_budget = kMaxSearchBudget;
  options.max_search_bytes = int64_t{1} << 20;
  absl::StatusOr<Plan> plan = testing::PlanChecked(
      big, {1024, 512, 256, 64}, "S(0),P(sum),R,S(3),P(sum),S(1),R,S(2)",
      "S(1),R,S(2),R,S(0),R,P(sum),R", options);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(plan.status().message().find(
                "torch_graph: its search reached the memory bound of 1048576 "
                "bytes (--max_search_bytes) after "),
            std::string::npos)
      << plan.status();
}

TEST(PlanFormatTest, JsonMatchesTheDesignExample) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  absl::StatusOr<Plan> plan =
      Plan1(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R",
            PlannerKind::kTorchGreedy, true, CostModelKind::kAlphaBeta);
  ASSERT_TRUE(plan.ok()) << plan.status();
  plan->planning_us = 8.1;
  EXPECT_EQ(
      PlanJson(mesh, *plan),
      "{\"mesh\":{\"shape\":[2,2,2],\"dim_names\":[\"A\",\"B\",\"C\"],"
      "\"flattened\":[[\"A\",\"C\"]]},\"tensor\":{\"shape\":[16,16],\"dtype\":"
      "\"float32\"},\"src\":\"P(sum),R,P(sum)\",\"dst\":\"R,R,R\",\"planner\":"
      "\"torch_greedy\",\"torch_version\":\"2.15.0\",\"cost_model\":"
      "\"alpha_beta\",\"steps\":[{\"op\":"
      "\"all_reduce\",\"mesh_dims\":[0,2],\"group\":\"A_C\",\"reduce_op\":"
      "\"sum\",\"avg_divisor\":1,\"src_tensor_dim\":null,\"dst_tensor_dim\":"
      "null,\"from\":\"P(sum),R,P(sum)\",\"to\":\"R,R,R\",\"bytes\":1024,"
      "\"time_us\":10.21751425313569}],\"trace\":\"P(sum)RP(sum)-->RRR\","
      "\"total_time_us\":10.21751425313569,\"total_bytes\":1024,\"peak_bytes\":"
      "2048,\"warnings\":[],\"planning_us\":8.1,\"states_expanded\":0,"
      "\"cache_hit\":false}");
}

TEST(PlanFormatTest, TorchModelPricesLikePyTorch) {
  // all_gather of 16x16 f32 sharded over 2 on dim 0: B = 512 B per shard,
  // S->R prices ag(B*2): 6.6 + 0.6 + (1024/2^30 * 1/2)/87.7 * 1e6.
  const Mesh mesh = MakeMesh({2});
  absl::StatusOr<Plan> plan = Plan1(mesh, {16, 16}, "S(0)", "R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const double bytes_gb = 1024.0 / 1024 / 1024 / 1024;
  EXPECT_DOUBLE_EQ(plan->total_time_us,
                   6.6 + 0.6 + (bytes_gb * 1 / 2) / 87.7 * 1e6);
  EXPECT_EQ(plan->steps[0].bytes, 1024);
}

}  // namespace
}  // namespace reshard
