// Planning latency of the PyTorch-compatible planners (torch_greedy,
// torch_graph, each with and without the merge post-pass) on 1-4-D meshes
// with a 3-D tensor. Results and the command: docs/PERFORMANCE.md.
#include <string>
#include <vector>

#include "bench/plan_loop.h"
#include "benchmark/benchmark.h"
#include "planner/planner.h"

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

void BM_Plan(benchmark::State& state, PlannerKind planner, bool merge) {
  const BenchCase& c = kCases[state.range(0) - 1];
  MeshSpec spec;
  spec.shape = c.mesh;
  const char* names[] = {"A", "B", "C", "D"};
  for (size_t d = 0; d < c.mesh.size(); ++d) spec.dim_names.push_back(names[d]);
  if (c.mesh.size() >= 2) spec.flattened.push_back({"A", "B"});
  const Mesh mesh = *Mesh::Create(spec);
  PlanOptions options{planner, CostModelKind::kTorch, merge};
  const PlanRequest request =
      *ParsePlanRequest(mesh, {1024, 1024, 64}, "f32", c.src, c.dst, options);
  PlanLoop(state, mesh, request);
}

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
