// Planning latency of the PyTorch-compatible planners (torch_greedy,
// torch_graph, each with and without the merge post-pass) on 1-4-D meshes
// with a 3-D tensor. Results and the command: docs/PERFORMANCE.md.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/plan_loop.h"
#include "benchmark/benchmark.h"
#include "planner/cost/plan_memory.h"
#include "planner/search/plan_cache.h"
#include "planner/search/planner.h"

namespace reshard {
namespace {

struct BenchCase {
  std::vector<int64_t> mesh;
  const char* src;
  const char* dst;
};

// One representative redistribution per mesh rank: shard moves plus a
// pending reduction, the mix auto-parallel solvers ask about.
const BenchCase kCases[] = {
    {{8}, "S(0)", "S(1)"},
    {{4, 4}, "S(0),S(1)", "S(1),S(0)"},
    {{4, 2, 2}, "P(sum),S(0),S(1)", "S(1),R,S(0)"},
    {{2, 2, 2, 2}, "S(0),P(sum),S(1),R", "R,S(1),S(0),S(0)"},
};

Mesh BenchMesh(const BenchCase& c) {
  MeshSpec spec;
  spec.shape = c.mesh;
  const char* names[] = {"A", "B", "C", "D"};
  for (size_t d = 0; d < c.mesh.size(); ++d) spec.dim_names.push_back(names[d]);
  if (c.mesh.size() >= 2) spec.flattened.push_back({"A", "B"});
  return *Mesh::Create(spec);
}

void BM_Plan(benchmark::State& state, PlannerKind planner, bool merge) {
  const BenchCase& c = kCases[state.range(0) - 1];
  const Mesh mesh = BenchMesh(c);
  PlanOptions options{planner, CostModelKind::kTorch, merge};
  const PlanRequest request =
      *ParsePlanRequest(mesh, {1024, 1024, 64}, "f32", c.src, c.dst, options);
  PlanLoop(state, mesh, request);
}

// What a plan's peak_bytes (planner/cost/plan_memory.h) costs of the above: the
// torch_greedy plan's peak alone, in the same run.
void BM_PlanPeak(benchmark::State& state) {
  const BenchCase& c = kCases[state.range(0) - 1];
  const Mesh mesh = BenchMesh(c);
  PlanOptions options{PlannerKind::kTorchGreedy, CostModelKind::kTorch, false};
  const Plan plan = *MakePlan(
      mesh,
      *ParsePlanRequest(mesh, {1024, 1024, 64}, "f32", c.src, c.dst, options));
  for (auto _ : state) {
    benchmark::DoNotOptimize(PlanPeak(mesh, plan).bytes);
  }
  state.SetLabel(absl::StrCat(plan.steps.size(), " steps"));
}
BENCHMARK(BM_PlanPeak)->DenseRange(1, 4)->ArgName("mesh_dims");

// What reshard.plan does below Python (python/native/native_module.cc),
// the baseline bench/python_plan_bench.py runs in the same run: parse the
// request's text, then plan through a 4,096-plan cache. `cached`: one
// one-step request, a hit after the first; cold: a new tensor size each
// time, every call a miss planning a three-step redistribution.
void BM_PlanFromText(benchmark::State& state, bool cached) {
  MeshSpec spec;
  spec.shape = {2, 2, 2};
  spec.dim_names = {"A", "B", "C"};
  spec.flattened = {{"A", "C"}};
  const Mesh mesh = *Mesh::Create(spec);
  PlanCache cache(4096);
  int64_t rows = 0;
  for (auto _ : state) {
    absl::StatusOr<PlanRequest> request =
        cached ? ParsePlanRequest(mesh, {16, 16}, "float32", "P(sum),R,P(sum)",
                                  "R,R,R", {})
               : ParsePlanRequest(mesh, {++rows, 16}, "float32", "S(0),S(1),R",
                                  "R,S(0),S(1)", {});
    absl::StatusOr<Plan> plan = MakePlanCached(mesh, *request, cache);
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(plan->total_time_us);
  }
}
BENCHMARK_CAPTURE(BM_PlanFromText, cached, true);
BENCHMARK_CAPTURE(BM_PlanFromText, cold, false);

BENCHMARK_CAPTURE(BM_Plan, torch_greedy, PlannerKind::kTorchGreedy, false)
    ->DenseRange(1, 4)
    ->ArgName("mesh_dims");
BENCHMARK_CAPTURE(BM_Plan, torch_greedy_merge, PlannerKind::kTorchGreedy, true)
    ->DenseRange(1, 4)
    ->ArgName("mesh_dims");
BENCHMARK_CAPTURE(BM_Plan, torch_graph, PlannerKind::kTorchGraph, false)
    ->DenseRange(1, 4)
    ->ArgName("mesh_dims");
BENCHMARK_CAPTURE(BM_Plan, torch_graph_merge, PlannerKind::kTorchGraph, true)
    ->DenseRange(1, 4)
    ->ArgName("mesh_dims");

}  // namespace
}  // namespace reshard

BENCHMARK_MAIN();
