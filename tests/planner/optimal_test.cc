// The optimal planner: the issue's worked examples, flatten policies, the
// peak-memory constraint, the budget fallback, determinism and A* ==
// Dijkstra. The plan cache is tested in plan_cache_test.cc.
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "planner/format/plan_format.h"
#include "planner/search/optimal_search.h"
#include "planner/search/planner.h"
#include "reference/plan_check.h"
#include "tests/planner/random_cases.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;
using testing::Ops;

absl::StatusOr<Plan> Optimal(const Mesh& mesh, std::vector<int64_t> shape,
                             const std::string& src, const std::string& dst,
                             PlanOptions options = {}) {
  return testing::PlanChecked(mesh, std::move(shape), src, dst, options);
}

TEST(OptimalTest, OneAllReduceOnTheRegisteredGroup) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  absl::StatusOr<Plan> plan =
      Optimal(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(PlannerName(plan->planner), "optimal");
  EXPECT_EQ(Ops(mesh, *plan), "all_reduce(A_C)");
  EXPECT_EQ(PlanTrace(*plan), "P(sum)RP(sum)-->RRR");
  EXPECT_TRUE(plan->warnings.empty());
  EXPECT_DOUBLE_EQ(plan->total_time_us,
                   6.6 + 6 * 0.6 + 1.5 * 1024 / 87.7e9 * 1e6);
}

TEST(OptimalTest, WarnsWithRemedyWhenTheGroupIsMissing) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  absl::StatusOr<Plan> plan =
      Optimal(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->CommunicatingSteps(mesh), 2);
  EXPECT_EQ(plan->CountOp(StepOp::kAllReduce), 2);
  ASSERT_EQ(plan->warnings.size(), 1u);
  const Warning& w = plan->warnings[0];
  EXPECT_EQ(WarningCodeName(w.code), "missing_flattened_group");
  EXPECT_EQ(w.dims, (std::vector<std::string>{"A", "C"}));
  EXPECT_NE(w.message.find("mesh[\"A\", \"C\"]._flatten()"), std::string::npos);
  EXPECT_NE(w.message.find("%"), std::string::npos) << w.message;
  // Two all_reduces of 8.4 µs vs one of 10.2 µs.
  EXPECT_NEAR(w.saving_us, 2 * (6.6 + 1.2) - (6.6 + 3.6), 0.1);
}

// D has size 1, so the registered (B,C,D) is the communicator of (B,C):
// `existing` gathers on it at once (PyTorch's merge pass does: 25.5 us)
// instead of gathering C and B apart (30.3 us) and advising (B,C).
TEST(OptimalTest, ARegisteredGroupServesItsDimsOfSizeAboveOne) {
  const Mesh mesh = MakeMesh({4, 2, 4, 1}, {{"A", "B", "D"},
                                            {"A", "C", "D"},
                                            {"B", "C", "D"},
                                            {"A", "C", "D", "B"}});
  const std::string src = "P(max),S(0)[0],S(0)[1],S(0)[2]";
  const std::string dst = "S(0)[0],S(0)[1],S(0)[2],S(0)[3]";
  absl::StatusOr<Plan> plan = Optimal(mesh, {8}, src, dst);
  ASSERT_TRUE(plan.ok()) << plan.status();
  PlanOptions torch{PlannerKind::kTorchGreedy};
  torch.merge = true;
  absl::StatusOr<Plan> greedy = Optimal(mesh, {8}, src, dst, torch);
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  EXPECT_NEAR(greedy->total_time_us, 25.5, 0.05);
  EXPECT_LE(plan->total_time_us, greedy->total_time_us + 1e-9)
      << PlanTable(mesh, *plan);
  for (const Warning& w : plan->warnings) {
    EXPECT_NE(WarningCodeName(w.code), "missing_flattened_group") << w.message;
  }
  bool on_bcd = false;
  for (const Step& s : plan->steps) {
    if (s.op == StepOp::kAllGather && mesh.GroupName(s.group) == "B_C_D") {
      on_bcd = true;
    }
  }
  EXPECT_TRUE(on_bcd) << PlanTable(mesh, *plan);
}

TEST(OptimalTest, MergesNonAdjacentReductionsAroundAGather) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  absl::StatusOr<Plan> plan =
      Optimal(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->CommunicatingSteps(mesh), 2);
  EXPECT_EQ(plan->CountOp(StepOp::kAllGather), 1);
  ASSERT_EQ(plan->CountOp(StepOp::kAllReduce), 1);
  for (const Step& s : plan->steps) {
    if (s.op == StepOp::kAllReduce) {
      EXPECT_EQ(mesh.GroupName(s.group), "A_C");
    }
  }
  // PyTorch needs three collectives here.
  PlanOptions greedy{PlannerKind::kTorchGreedy};
  greedy.merge = true;
  absl::StatusOr<Plan> torch =
      Optimal(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R", greedy);
  ASSERT_TRUE(torch.ok());
  EXPECT_EQ(torch->CommunicatingSteps(mesh), 3);
  EXPECT_LT(plan->total_time_us, torch->total_time_us);
}

TEST(OptimalTest, MergesAllToAll) {
  const Mesh mesh = MakeMesh({2, 2}, {{"A", "B"}});
  absl::StatusOr<Plan> plan = Optimal(mesh, {64, 64}, "S(0),S(0)", "S(1),S(1)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "all_to_all(A_B)");
}

TEST(OptimalTest, MergesOnUnevenShapes) {
  const Mesh mesh = MakeMesh({2, 3}, {{"A", "B"}});
  absl::StatusOr<Plan> plan =
      Optimal(mesh, {4, 1}, "P(sum),P(sum)", "S(0),S(0)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Ops(mesh, *plan), "reduce_scatter(A_B)");
}

TEST(OptimalTest, FlattenPolicies) {
  const Mesh mesh = MakeMesh({2, 2, 2});
  PlanOptions options;
  options.flatten_policy = FlattenPolicy::kAny;
  absl::StatusOr<Plan> any =
      Optimal(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R", options);
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(Ops(mesh, *any), "all_reduce(A_C)");
  EXPECT_TRUE(any->warnings.empty());
  options.flatten_policy = FlattenPolicy::kNone;
  const Mesh registered = MakeMesh({2, 2, 2}, {{"A", "C"}});
  absl::StatusOr<Plan> none =
      Optimal(registered, {16, 16}, "P(sum),R,P(sum)", "R,R,R", options);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->CommunicatingSteps(registered), 2);
  for (const Step& s : none->steps) EXPECT_EQ(s.group.size(), 1u);
}

TEST(OptimalTest, RespectsMaxPeakBytes) {
  // S(0)->S(1) on 4 ranks: the all_to_all peaks at in+out of the local
  // block; gathering first needs the whole tensor.
  const Mesh mesh = MakeMesh({4});
  absl::StatusOr<Plan> free_plan = Optimal(mesh, {64, 64}, "S(0)", "S(1)");
  ASSERT_TRUE(free_plan.ok());
  EXPECT_EQ(Ops(mesh, *free_plan), "all_to_all(A)");
  PlanOptions options;
  options.max_peak_bytes = free_plan->peak_bytes - 1;
  absl::StatusOr<Plan> none = Optimal(mesh, {64, 64}, "S(0)", "S(1)", options);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("options.max_peak_bytes"),
            std::string::npos)
      << none.status();
  // A P(sum)->S(0) reduce_scatter peaks below the all_reduce+chunk path.
  absl::StatusOr<Plan> rs = Optimal(mesh, {64, 64}, "P(sum)", "S(0)");
  ASSERT_TRUE(rs.ok());
  options.max_peak_bytes = rs->peak_bytes;
  absl::StatusOr<Plan> bounded =
      Optimal(mesh, {64, 64}, "P(sum)", "S(0)", options);
  ASSERT_TRUE(bounded.ok()) << bounded.status();
  EXPECT_LE(bounded->peak_bytes, *options.max_peak_bytes);
}

TEST(OptimalTest, BudgetFallsBackWithAWarning) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  PlanOptions options;
  options.search_budget = 1;
  absl::StatusOr<Plan> plan =
      Optimal(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R", options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->warnings.empty());
  EXPECT_EQ(WarningCodeName(plan->warnings.back().code),
            "search_budget_exceeded");
  EXPECT_NE(plan->warnings.back().message.find("torch_greedy+merge"),
            std::string::npos);
  // The table's total line says so too.
  EXPECT_NE(PlanTable(mesh, *plan)
                .find("(alpha_beta model, optimal planner's fallback: see "
                      "search_budget_exceeded)"),
            std::string::npos)
      << PlanTable(mesh, *plan);
  EXPECT_EQ(plan->CommunicatingSteps(mesh), 3);
  // Non-default orders cannot fall back to greedy: they go through R (the
  // plan is checked by the simulator, like every plan Optimal returns).
  absl::StatusOr<Plan> via_r =
      Optimal(mesh, {16, 16}, "S(0)[1]S(0)[0]R", "S(1),R,P(avg)", options);
  ASSERT_TRUE(via_r.ok()) << via_r.status();
  ASSERT_FALSE(via_r->warnings.empty());
  EXPECT_EQ(WarningCodeName(via_r->warnings.back().code),
            "search_budget_exceeded");
  EXPECT_NE(via_r->warnings.back().message.find(
                "fell back to gathering to R and splitting again "
                "(torch_greedy: "),
            std::string::npos)
      << via_r->warnings.back().message;
  EXPECT_EQ(via_r->warnings.back().message.find("torch_greedy: torch_greedy"),
            std::string::npos)
      << via_r->warnings.back().message;
  EXPECT_EQ(Ops(mesh, *via_r),
            "all_gather(A) all_gather(B) chunk(A) partition(C)");
}

// Two unregistered groups that each make the plan cheaper: each warning
// states what registering that group alone saves (not what the two save
// together), checked against planning on a mesh that registers it; a
// non-ascending group gets advice a user can follow today.
TEST(OptimalTest, EachMissingGroupStatesItsOwnSaving) {
  const Mesh mesh = MakeMesh({2, 2, 3, 2});
  const std::string src = "P(sum),P(sum),S(0)[1],S(0)[0]";
  const std::string dst = "S(0)[0],S(0)[1],R,R";
  absl::StatusOr<Plan> plan = Optimal(mesh, {1}, src, dst);
  ASSERT_TRUE(plan.ok()) << plan.status();
  PlanOptions any_options;
  any_options.flatten_policy = FlattenPolicy::kAny;
  absl::StatusOr<Plan> any = Optimal(mesh, {1}, src, dst, any_options);
  ASSERT_TRUE(any.ok()) << any.status();
  ASSERT_EQ(plan->warnings.size(), 2u);
  double sum = 0;
  for (const Warning& w : plan->warnings) {
    SCOPED_TRACE(w.message);
    EXPECT_EQ(w.code, WarningCode::kMissingFlattenedGroup);
    const Mesh remedied = MakeMesh({2, 2, 3, 2}, {w.dims});
    absl::StatusOr<Plan> with = Optimal(remedied, {1}, src, dst);
    ASSERT_TRUE(with.ok()) << with.status();
    EXPECT_NEAR(w.saving_us, plan->total_time_us - with->total_time_us, 1e-9);
    EXPECT_GT(w.saving_us, 0);
    EXPECT_LT(w.saving_us, plan->total_time_us - any->total_time_us - 1);
    sum += w.saving_us;
    EXPECT_NE(w.message.find(absl::StrFormat(
                  "with all of (\"D\", \"C\"), (\"A\", \"B\") registered "
                  "the plan would cost %.4g us",
                  any->total_time_us)),
              std::string::npos);
  }
  EXPECT_GT(sum, 0);
  const Warning& dc = plan->warnings[0];
  EXPECT_EQ(dc.dims, (std::vector<std::string>{"D", "C"}));
  EXPECT_NE(dc.message.find("register the flattened group (\"D\", \"C\") "
                            "with the mesh (mesh.flattened; reshardctl: "
                            "--flatten D,C); PyTorch can flatten only "
                            "ascending dims"),
            std::string::npos);
  EXPECT_EQ(dc.message.find("does not exist"), std::string::npos);
  EXPECT_EQ(dc.message.find("create it with Reshard's executor"),
            std::string::npos);
}

// A cap holds for the budget fallback too: the optimal search plans within
// it, but torch_greedy+merge does not, so an over-cap fallback is refused
// naming its peak, the cap and the budget to raise.
TEST(OptimalTest, FallbackAboveTheCapIsRefused) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  PlanOptions options;
  options.search_budget = 1;
  absl::StatusOr<Plan> fallback =
      Optimal(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R", options);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  ASSERT_EQ(fallback->warnings.back().code, WarningCode::kSearchBudgetExceeded);
  options.max_peak_bytes = fallback->peak_bytes - 1;
  absl::StatusOr<Plan> capped =
      Optimal(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R", options);
  EXPECT_EQ(capped.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(capped.status().message().find(absl::StrCat(
                "options.max_peak_bytes: the optimal planner's fallback plan "
                "(its search ran out of budget; raise options.search_budget) "
                "peaks at ",
                fallback->peak_bytes, " bytes per rank")),
            std::string::npos)
      << capped.status();
  EXPECT_NE(capped.status().message().find(absl::StrCat(
                "above the cap of ", fallback->peak_bytes - 1, " bytes")),
            std::string::npos);
}

// The search_budget_exceeded warning sets the fallback's cost against the
// search's lower bound (an 8-D fallback can cost 6.39 s against an optimum
// of 0.169 s, and the warning says so).
TEST(OptimalTest, BudgetWarningStatesFallbackCostAndLowerBound) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  PlanOptions options;
  options.search_budget = 1;
  absl::StatusOr<Plan> plan =
      Optimal(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R", options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->warnings.empty());
  const Warning& w = plan->warnings.back();
  ASSERT_EQ(w.code, WarningCode::kSearchBudgetExceeded);
  absl::StatusOr<Plan> best =
      Optimal(mesh, {16, 16}, "P(sum),S(0),P(sum)", "R,R,R");
  ASSERT_TRUE(best.ok()) << best.status();
  // saving_us: the fallback's cost minus the lower bound, which cannot
  // exceed the optimum.
  const double lower_bound = plan->total_time_us - w.saving_us;
  EXPECT_GT(w.saving_us, 0);
  EXPECT_GT(lower_bound, 0);
  EXPECT_LE(lower_bound, best->total_time_us);
  EXPECT_NE(w.message.find(absl::StrFormat(
                "the optimal search expanded more than 1 states; fell back to "
                "torch_greedy+merge, which costs %.4g us, while no plan costs "
                "less than %.4g us (the search's lower bound): a larger search "
                "budget can save at most %.4g us",
                plan->total_time_us, lower_bound, w.saving_us)),
            std::string::npos)
      << w.message;
}

// Past --max_search_bytes the search falls back as past its budget, the
// warning naming the memory bound, and its tables stayed within it.
TEST(OptimalTest, ASearchPastItsMemoryBoundFallsBackNamingIt) {
  const Mesh mesh = MakeMesh({2, 2, 2, 2, 2, 2, 2, 2});
  PlanOptions options;
  options.search_budget = kMaxSearchBudget;
  options.max_search_bytes = int64_t{4} << 20;
  absl::StatusOr<Plan> plan = Optimal(
      mesh, {2, 2, 2, 2, 2, 2, 2, 2}, "S(0),S(1),S(2),S(3),S(4),S(5),S(6),S(7)",
      "S(7),S(6),S(5),S(4),S(3),S(2),S(1),S(0)", options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->warnings.empty());
  const Warning& w = plan->warnings.back();
  EXPECT_EQ(w.code, WarningCode::kSearchBudgetExceeded);
  EXPECT_NE(w.message.find("the optimal search reached its memory bound of "
                           "4194304 bytes (--max_search_bytes); fell back to"),
            std::string::npos)
      << w.message;
  EXPECT_GT(plan->search_bytes, 0);
  EXPECT_LE(plan->search_bytes, options.max_search_bytes);
}

// The lower bound an exhausted search reports never exceeds the optimum,
// on random cases and budgets.
TEST(OptimalTest, ExhaustedSearchLowerBoundIsAdmissible) {
  std::mt19937_64 rng(1010);
  int exhausted = 0;
  for (int i = 0; i < testing::ScaledCases(2000); ++i) {
    const testing::RandomCase c =
        testing::MakeRandomCase(rng, i % 2 ? 4096 : 9, i % 2 == 1);
    const CostModel model(
        c.mesh, c.tensor,
        {i % 3 ? CostModelKind::kAlphaBeta : CostModelKind::kTorch,
         int64_t{1} << (rng() % 5)});
    SearchOptions options;
    options.flatten_policy = static_cast<FlattenPolicy>(i % 3);
    absl::StatusOr<SearchResult> best =
        OptimalSearch(c.mesh, model, c.src, c.dst, options);
    ASSERT_TRUE(best.ok()) << i << ": " << best.status();
    if (best->states_expanded < 2) continue;
    options.budget = 1 + static_cast<int64_t>(rng() % best->states_expanded);
    double lower_bound = -1;
    absl::StatusOr<SearchResult> cut =
        OptimalSearch(c.mesh, model, c.src, c.dst, options, &lower_bound);
    if (cut.ok()) continue;  // ties: fewer expansions sufficed
    ASSERT_EQ(cut.status().code(), absl::StatusCode::kResourceExhausted);
    ++exhausted;
    EXPECT_GE(lower_bound, 0) << i;
    EXPECT_LE(lower_bound, best->cost) << i;
  }
  EXPECT_GT(exhausted, 100);
}

TEST(OptimalTest, PlansWhatPyTorchCannot) {
  const Mesh mesh = MakeMesh({2, 3});
  for (auto [src, dst] :
       {std::pair{"P(sum),R", "P(avg),R"}, std::pair{"S(0),R", "P(max),R"},
        std::pair{"P(max),P(max)", "P(sum),S(1)"}}) {
    SCOPED_TRACE(absl::StrCat(src, " -> ", dst));
    absl::StatusOr<Plan> plan = Optimal(mesh, {7, 5}, src, dst);
    EXPECT_TRUE(plan.ok()) << plan.status();
  }
}

TEST(OptimalTest, IsDeterministic) {
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "B"}, {"B", "C"}});
  absl::StatusOr<Plan> a =
      Optimal(mesh, {9, 7, 5}, "S(0),P(sum),S(1)", "S(2),S(0),R");
  absl::StatusOr<Plan> b =
      Optimal(mesh, {9, 7, 5}, "S(0),P(sum),S(1)", "S(2),S(0),R");
  ASSERT_TRUE(a.ok() && b.ok());
  a->planning_us = b->planning_us = 0;
  EXPECT_EQ(PlanJson(mesh, *a), PlanJson(mesh, *b));
}

// Runs A* and plain Dijkstra on one case and checks that they reach the
// same cost; returns their expanded-state counts.
std::pair<int64_t, int64_t> CompareWithDijkstra(
    const Mesh& mesh, const CostModel& model, const DistState& src,
    const DistState& dst, SearchOptions options, int case_index) {
  absl::StatusOr<SearchResult> astar =
      OptimalSearch(mesh, model, src, dst, options);
  options.use_heuristic = false;
  absl::StatusOr<SearchResult> dijkstra =
      OptimalSearch(mesh, model, src, dst, options);
  EXPECT_TRUE(astar.ok() && dijkstra.ok()) << case_index;
  if (!astar.ok() || !dijkstra.ok()) return {0, 0};
  EXPECT_NEAR(astar->cost, dijkstra->cost, 1e-9 * (1 + dijkstra->cost))
      << "case " << case_index << " " << src.ToString() << " -> "
      << dst.ToString();
  return {astar->states_expanded, dijkstra->states_expanded};
}

// The heuristic is admissible: A* finds the same cost as plain Dijkstra,
// on thousands of random cases and every flatten policy. Tiny tensors
// (latency dominates) and large ones with random links and host sizes
// (bandwidth dominates), where the byte bounds are what count.
void ExpectAStarMatchesDijkstra(int64_t max_extent, bool random_links,
                                uint64_t seed, bool unit_dim_groups = false,
                                int corpus = 3000, bool group_links = false) {
  std::mt19937_64 rng(seed);
  int64_t astar_expanded = 0, dijkstra_expanded = 0;
  const int cases = testing::ScaledCases(corpus);
  for (int i = 0; i < cases; ++i) {
    testing::RandomCase c =
        unit_dim_groups
            ? testing::MakeUnitDimGroupCase(rng, max_extent, random_links)
            : testing::MakeRandomCase(rng, max_extent, random_links);
    if (group_links) c = testing::WithRandomGroupLinks(rng, std::move(c));
    const int64_t devices_per_host = random_links ? 1 << (rng() % 5) : 8;
    for (CostModelKind kind :
         {CostModelKind::kAlphaBeta, CostModelKind::kTorch}) {
      const CostModel model(c.mesh, c.tensor, {kind, devices_per_host});
      SearchOptions options;
      options.flatten_policy = static_cast<FlattenPolicy>(i % 3);
      const auto [astar, dijkstra] =
          CompareWithDijkstra(c.mesh, model, c.src, c.dst, options, i);
      if (::testing::Test::HasFailure()) return;
      astar_expanded += astar;
      dijkstra_expanded += dijkstra;
    }
  }
  EXPECT_LE(astar_expanded, dijkstra_expanded);
  std::cout << cases << " cases, max extent " << max_extent
            << (unit_dim_groups ? ", groups with size-1 dims" : "")
            << ": expanded: A* " << astar_expanded << ", Dijkstra "
            << dijkstra_expanded << "\n";
}

TEST(OptimalTest, AStarMatchesDijkstraLatencyBound) {
  ExpectAStarMatchesDijkstra(9, false, 7);
}

TEST(OptimalTest, AStarMatchesDijkstraBandwidthBound) {
  ExpectAStarMatchesDijkstra(4096, true, 11);
}

// Registered groups with size-1 dims serve the groups of their other dims
// in the search and in the remaining-cost bound alike.
TEST(OptimalTest, AStarMatchesDijkstraWithUnitDimGroups) {
  ExpectAStarMatchesDijkstra(9, false, 13, true, 1000);
  ExpectAStarMatchesDijkstra(4096, true, 17, true, 1000);
}

// Flattened groups with links of their own (calibrated meshes), faster or
// slower than their dims', registered in any order: the bound takes the
// fastest link over each dim set, so A* still finds Dijkstra's cost.
TEST(OptimalTest, AStarMatchesDijkstraWithGroupLinks) {
  ExpectAStarMatchesDijkstra(9, false, 19, false, 1000, true);
  ExpectAStarMatchesDijkstra(4096, true, 23, false, 1000, true);
  ExpectAStarMatchesDijkstra(4096, true, 29, true, 500, true);
}

// 5-D meshes (where the searches are long), large tensors, random host
// sizes, registered groups or none.
TEST(OptimalTest, AStarMatchesDijkstraOnFiveDimMeshes) {
  std::mt19937_64 rng(5);
  const int cases = testing::ScaledCases(100);
  for (int i = 0; i < cases; ++i) {
    MeshSpec spec;
    spec.shape = {2, 2, 2, 2, 2};
    spec.dim_names = {"A", "B", "C", "D", "E"};
    if (i % 2) spec.flattened = {{"A", "B"}, {"C", "D"}, {"B", "E"}};
    const Mesh mesh = *Mesh::Create(spec);
    const int rank = 1 + i % 4;
    std::vector<int64_t> shape;
    for (int k = 0; k < rank; ++k) shape.push_back(1 + rng() % 3000);
    const TensorSpec tensor = *TensorSpec::Create(shape, DType::kFloat32);
    const DistState src = testing::RandomState(rng, mesh, rank);
    const DistState dst = testing::RandomState(rng, mesh, rank);
    const CostModel model(
        mesh, tensor,
        {i % 3 != 0 ? CostModelKind::kAlphaBeta : CostModelKind::kTorch,
         int64_t{1} << (rng() % 5)});
    SearchOptions options;
    options.flatten_policy = static_cast<FlattenPolicy>(i % 3);
    options.budget = 10000000;
    const auto [astar, dijkstra] =
        CompareWithDijkstra(mesh, model, src, dst, options, i);
    ASSERT_FALSE(::testing::Test::HasFailure());
    EXPECT_LE(astar, dijkstra) << i;
  }
}

}  // namespace
}  // namespace reshard
