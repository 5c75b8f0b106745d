// Acceptance cases from PyTorch's own DTensor tests (tests/data/
// torch_counts.jsonl): torch_greedy must emit exactly PyTorch's collective
// counts, local shapes and warnings, and every planner's plan for every case
// must pass the reference simulator.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/search/planner.h"
#include "reference/plan_check.h"
#include "tests/json_lite.h"

namespace reshard {
namespace {

using testing::Json;

std::vector<Json> LoadCases() {
  return testing::LoadJsonLines(std::string(RESHARD_TEST_DATA) +
                                "/torch_counts.jsonl");
}

Mesh CaseMesh(const Json& c) {
  MeshSpec spec;
  spec.shape = c["mesh"].Ints();
  spec.dim_names = c["names"].Strings();
  for (const Json& g : c["flattened"].array)
    spec.flattened.push_back(g.Strings());
  absl::StatusOr<Mesh> mesh = Mesh::Create(spec);
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

std::vector<int64_t> Rows(const Mesh& mesh, const DistState& state,
                          const std::vector<int64_t>& shape) {
  std::vector<int64_t> rows;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    rows.push_back(LocalBox(mesh, state, shape, p).extent[0]);
  }
  return rows;
}

TEST(TorchCasesTest, FileHasAllCases) { EXPECT_EQ(LoadCases().size(), 21u); }

TEST(TorchCasesTest, GreedyMatchesPyTorch) {
  for (const Json& c : LoadCases()) {
    SCOPED_TRACE(c["id"].string);
    const Mesh mesh = CaseMesh(c);
    PlanOptions options;
    ASSERT_EQ(c["planner"].string, "torch_greedy");
    options.planner = PlannerKind::kTorchGreedy;
    options.merge = c["merge"].boolean;
    const std::string dtype = c.Has("dtype") ? c["dtype"].string : "float32";
    absl::StatusOr<PlanRequest> request =
        ParsePlanRequest(mesh, c["shape"].Ints(), dtype, c["src"].string,
                         c["dst"].string, options);
    ASSERT_TRUE(request.ok()) << request.status();
    absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
    ASSERT_TRUE(plan.ok()) << plan.status();

    std::map<std::string, int> counts;
    for (const Step& s : plan->steps) {
      if (s.IsCommunicating(mesh)) ++counts[std::string(StepOpName(s.op))];
    }
    std::map<std::string, int> expected;
    for (const auto& [op, n] : c["expect"].object) expected[op] = n.Int();
    EXPECT_EQ(counts, expected);

    const std::vector<int64_t> shape = c["shape"].Ints();
    if (c.Has("local_rows")) {
      EXPECT_EQ(Rows(mesh, request->dst, shape), c["local_rows"].Ints());
    }
    if (c.Has("src_local_rows")) {
      EXPECT_EQ(Rows(mesh, request->src, shape), c["src_local_rows"].Ints());
    }
    if (c.Has("dst_local_rows")) {
      EXPECT_EQ(Rows(mesh, request->dst, shape), c["dst_local_rows"].Ints());
    }
    if (c.Has("warning")) {
      bool found = false;
      for (const Warning& w : plan->warnings)
        found |= WarningCodeName(w.code) == c["warning"].string;
      EXPECT_TRUE(found) << "missing warning " << c["warning"].string;
    } else {
      EXPECT_TRUE(plan->warnings.empty()) << plan->warnings[0].message;
    }
    EXPECT_TRUE(CheckPlan(mesh, *plan).ok()) << CheckPlan(mesh, *plan);
  }
}

TEST(TorchCasesTest, EveryPlannerPassesTheSimulator) {
  for (const Json& c : LoadCases()) {
    SCOPED_TRACE(c["id"].string);
    const Mesh mesh = CaseMesh(c);
    for (PlannerKind planner :
         {PlannerKind::kTorchGreedy, PlannerKind::kTorchGraph}) {
      for (bool merge : {false, true}) {
        for (CostModelKind model :
             {CostModelKind::kAlphaBeta, CostModelKind::kTorch}) {
          PlanOptions options{planner, model, merge};
          absl::StatusOr<PlanRequest> request =
              ParsePlanRequest(mesh, c["shape"].Ints(), "float32",
                               c["src"].string, c["dst"].string, options);
          ASSERT_TRUE(request.ok()) << request.status();
          absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
          ASSERT_TRUE(plan.ok())
              << PlannerName(planner) << ": " << plan.status();
          EXPECT_TRUE(CheckPlan(mesh, *plan).ok())
              << PlannerName(planner) << " merge=" << merge << ": "
              << CheckPlan(mesh, *plan);
        }
      }
    }
  }
}

}  // namespace
}  // namespace reshard
