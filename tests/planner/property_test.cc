// Property test: on thousands of random cases (random meshes, uneven shapes,
// random shard orders, partial mixes, random registered groups) every plan
// of every planner passes the reference simulator exactly, and PyTorch's
// Dijkstra never costs more than its greedy planner under the torch model.
#include <map>
#include <random>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "planner/cost/cost_model.h"
#include "planner/cost/plan_costs.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "reference/plan_check.h"
#include "tests/planner/random_cases.h"

namespace reshard {
namespace {

constexpr int kCases = 20000;

TEST(PropertyTest, EveryPlanOfEveryPlannerPassesTheSimulator) {
  std::mt19937_64 rng(20261123);
  std::map<std::string, int> planned, refused;
  const int cases = testing::ScaledCases(kCases);
  for (int i = 0; i < cases; ++i) {
    const testing::RandomCase c = testing::MakeRandomCase(rng);
    std::optional<double> greedy_torch_cost, graph_torch_cost;
    for (PlannerKind planner :
         {PlannerKind::kTorchGreedy, PlannerKind::kTorchGraph}) {
      for (bool merge : {false, true}) {
        const std::string name =
            absl::StrCat(PlannerName(planner), merge ? "+merge" : "");
        PlanOptions options{planner, CostModelKind::kTorch, merge};
        absl::StatusOr<Plan> plan =
            MakePlan(c.mesh, {c.tensor, c.src, c.dst, options});
        if (!plan.ok()) {
          // Only what PyTorch itself cannot do may be refused.
          ASSERT_TRUE(
              plan.status().code() == absl::StatusCode::kFailedPrecondition ||
              (planner == PlannerKind::kTorchGreedy &&
               plan.status().code() == absl::StatusCode::kInvalidArgument &&
               (!c.src.HasDefaultOrder() || !c.dst.HasDefaultOrder())))
              << "case " << i << " " << name << ": " << plan.status();
          ++refused[name];
          continue;
        }
        ++planned[name];
        const absl::Status check = CheckPlan(c.mesh, *plan, i);
        ASSERT_TRUE(check.ok())
            << "case " << i << " " << name << " " << c.src.ToString() << " -> "
            << c.dst.ToString() << " mesh ["
            << absl::StrJoin(c.mesh.shape(), ",") << "] shape ["
            << absl::StrJoin(c.tensor.shape(), ",") << "]: " << check << "\n"
            << PlanTable(c.mesh, *plan);
        if (!merge && planner == PlannerKind::kTorchGreedy) {
          greedy_torch_cost = plan->total_time_us;
        }
        if (!merge && planner == PlannerKind::kTorchGraph) {
          graph_torch_cost = plan->total_time_us;
        }
      }
    }
    // With size-1 dims greedy may stop at a merely equivalent state that
    // Dijkstra (exact destination, as PyTorch) has to reach exactly.
    const bool no_unit_dims =
        std::find(c.mesh.shape().begin(), c.mesh.shape().end(), 1) ==
        c.mesh.shape().end();
    if (greedy_torch_cost && graph_torch_cost && no_unit_dims) {
      ASSERT_LE(*graph_torch_cost, *greedy_torch_cost + 1e-9)
          << "case " << i << " mesh [" << absl::StrJoin(c.mesh.shape(), ",")
          << "] " << c.src.ToString() << " -> " << c.dst.ToString();
    }
  }
  for (const auto& [name, n] : planned) {
    std::cout << name << ": " << n << " planned, " << refused[name]
              << " refused\n";
    // Most random cases are plannable by every torch mode.
    EXPECT_GT(n, cases / 3) << name;
  }
}

}  // namespace
}  // namespace reshard
