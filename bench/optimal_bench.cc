// Cold (uncached) planning latency of the optimal planner for meshes of 1-5
// dims x tensor ranks 1-4 under each flatten policy, plus cached lookups.
// Results and the command: docs/PERFORMANCE.md.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "bench/plan_loop.h"
#include "benchmark/benchmark.h"
#include "planner/plan_cache.h"
#include "planner/planner.h"

namespace reshard {
namespace {

const std::vector<int64_t> kMeshes[] = {
    {8}, {4, 4}, {4, 2, 2}, {2, 2, 2, 2}, {2, 2, 2, 2, 2}};

// A mesh of `dims` dims with every adjacent pair of dims registered.
Mesh BenchMesh(int dims) {
  MeshSpec spec;
  spec.shape = kMeshes[dims - 1];
  const char* names[] = {"A", "B", "C", "D", "E"};
  for (int d = 0; d < dims; ++d) spec.dim_names.push_back(names[d]);
  for (int d = 0; d + 1 < dims; ++d)
    spec.flattened.push_back({names[d], names[d + 1]});
  return *Mesh::Create(spec);
}

// A shard move plus pending reductions: src mixes S/P/R, dst reshards.
PlanRequest BenchRequest(const Mesh& mesh, int rank, FlattenPolicy policy) {
  std::vector<std::string> src, dst;
  for (int i = 0; i < mesh.ndim(); ++i) {
    src.push_back(i % 3 == 0   ? absl::StrCat("S(", i % rank, ")")
                  : i % 3 == 1 ? "P(sum)"
                               : "R");
    dst.push_back(i % 2 == 0 ? absl::StrCat("S(", (i + 1) % rank, ")") : "R");
  }
  PlanOptions options;
  options.flatten_policy = policy;
  std::vector<int64_t> shape = {1024, 512, 256, 64};
  shape.resize(rank);
  return *ParsePlanRequest(mesh, shape, "f32", absl::StrJoin(src, ","),
                           absl::StrJoin(dst, ","), options);
}

void BM_OptimalCold(benchmark::State& state, FlattenPolicy policy) {
  const Mesh mesh = BenchMesh(static_cast<int>(state.range(0)));
  const PlanRequest request =
      BenchRequest(mesh, static_cast<int>(state.range(1)), policy);
  PlanLoop(state, mesh, request);
}

void BM_OptimalCached(benchmark::State& state) {
  const Mesh mesh = BenchMesh(static_cast<int>(state.range(0)));
  const PlanRequest request = BenchRequest(mesh, 3, FlattenPolicy::kExisting);
  PlanCache cache(1024);
  (void)MakePlanCached(mesh, request, cache);
  for (auto _ : state) {
    absl::StatusOr<Plan> plan = MakePlanCached(mesh, request, cache);
    benchmark::DoNotOptimize(plan->cache_hit);
  }
}

void Args(benchmark::internal::Benchmark* b) {
  for (int dims = 1; dims <= 5; ++dims) {
    for (int rank = 1; rank <= 4; ++rank) b->Args({dims, rank});
  }
  b->ArgNames({"mesh_dims", "tensor_rank"});
}

BENCHMARK_CAPTURE(BM_OptimalCold, existing, FlattenPolicy::kExisting)
    ->Apply(Args);
BENCHMARK_CAPTURE(BM_OptimalCold, any, FlattenPolicy::kAny)->Apply(Args);
BENCHMARK_CAPTURE(BM_OptimalCold, none, FlattenPolicy::kNone)->Apply(Args);
BENCHMARK(BM_OptimalCached)->DenseRange(1, 5)->ArgName("mesh_dims");

}  // namespace
}  // namespace reshard

BENCHMARK_MAIN();
