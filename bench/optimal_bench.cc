// Cold (uncached) planning latency of the optimal planner for meshes of 1-5
// dims x tensor ranks 1-4 under each flatten policy, the latency spread over
// random requests on 2^d meshes and on 6-8-D meshes, plus cached lookups.
// Results and the command: docs/PERFORMANCE.md.
#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/plan_loop.h"
#include "benchmark/benchmark.h"
#include "planner/search/plan_cache.h"
#include "planner/search/planner.h"

namespace reshard {
namespace {

const std::vector<int64_t> kMeshes[] = {
    {8}, {4, 4}, {4, 2, 2}, {2, 2, 2, 2}, {2, 2, 2, 2, 2}};

// A mesh of `dims` dims with every adjacent pair of dims registered and,
// when given, a measured copy rate (packing priced).
Mesh BenchMesh(int dims, std::optional<double> copy_gbps = std::nullopt) {
  MeshSpec spec;
  spec.copy_gbps = copy_gbps;
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

// As BM_OptimalCold under `any`, on a mesh with a measured copy rate (2
// GB/s, the emulated cluster's): the search also prices packing, which
// its bound does not see.
void BM_OptimalCopyRate(benchmark::State& state) {
  const Mesh mesh = BenchMesh(static_cast<int>(state.range(0)), 2.0);
  const PlanRequest request =
      BenchRequest(mesh, static_cast<int>(state.range(1)), FlattenPolicy::kAny);
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

// A random state on `mesh`: R, S(k) (random split order) or P(sum) per dim.
std::string RandomState(std::mt19937_64& rng, const Mesh& mesh, int rank) {
  std::vector<std::string> placements;
  std::vector<int> next_index(rank, 0);
  std::vector<int> dims(mesh.ndim());
  for (int m = 0; m < mesh.ndim(); ++m) dims[m] = m;
  std::shuffle(dims.begin(), dims.end(), rng);  // the split order
  placements.resize(mesh.ndim());
  std::vector<int> tensor_dim(mesh.ndim(), -1);
  for (int m : dims) {
    const int kind = static_cast<int>(rng() % 5);
    if (kind < 2) {
      placements[m] = "R";
    } else if (kind < 4) {
      tensor_dim[m] = static_cast<int>(rng() % rank);
      placements[m] = absl::StrCat("S(", tensor_dim[m], ")[",
                                   next_index[tensor_dim[m]]++, "]");
    } else {
      placements[m] = "P(sum)";
    }
  }
  return absl::StrJoin(placements, ",");
}

// Plans 200 random requests (2^d mesh with adjacent pairs registered,
// tensor rank 1-4 with dims 64-4096 f32, random src/dst) in turn; reports
// the median, p90 and max single-request latency of a first timed pass.
void BM_OptimalRandom(benchmark::State& state, FlattenPolicy policy) {
  const int dims = static_cast<int>(state.range(0));
  MeshSpec spec;
  const char* names[] = {"A", "B", "C", "D", "E"};
  for (int d = 0; d < dims; ++d) {
    spec.shape.push_back(2);
    spec.dim_names.push_back(names[d]);
  }
  for (int d = 0; d + 1 < dims; ++d)
    spec.flattened.push_back({names[d], names[d + 1]});
  const Mesh mesh = *Mesh::Create(spec);
  std::mt19937_64 rng(42);
  std::vector<PlanRequest> requests;
  for (int i = 0; i < 200; ++i) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    std::vector<int64_t> shape;
    for (int k = 0; k < rank; ++k) shape.push_back(64 << (rng() % 7));
    PlanOptions options;
    options.flatten_policy = policy;
    requests.push_back(
        *ParsePlanRequest(mesh, shape, "f32", RandomState(rng, mesh, rank),
                          RandomState(rng, mesh, rank), options));
  }
  std::vector<double> micros;
  for (const PlanRequest& r : requests) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(MakePlan(mesh, r));
    micros.push_back(std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - start)
                         .count());
  }
  std::sort(micros.begin(), micros.end());
  size_t next = 0;
  for (auto _ : state) {
    absl::StatusOr<Plan> plan = MakePlan(mesh, requests[next]);
    benchmark::DoNotOptimize(plan->total_time_us);
    next = (next + 1) % requests.size();
  }
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p90_us"] = micros[micros.size() * 9 / 10];
  state.counters["max_us"] = micros.back();
}

// A torchtitan-style mesh of 6 or 7 dims (pp, dp_replicate, dp_shard, cp,
// tp, ep and, for 7, etp), each of size 1, 2, 4 or 8, at most 4,096 ranks,
// no flattened groups registered.
Mesh HighDimMesh(std::mt19937_64& rng) {
  const char* names[] = {"pp", "dp_replicate", "dp_shard", "cp",
                         "tp", "ep",           "etp"};
  const int dims = 6 + static_cast<int>(rng() % 2);
  MeshSpec spec;
  int64_t world = 1;
  for (int d = 0; d < dims; ++d) {
    int64_t size = int64_t{1} << (rng() % 4);
    while (world * size > 4096) size /= 2;
    world *= size;
    spec.shape.push_back(size);
    spec.dim_names.push_back(names[d]);
  }
  return *Mesh::Create(spec);
}

// A random state with P(sum) and P(avg) among the placements (sum and avg
// may mix) and a random split order.
std::string HighDimState(std::mt19937_64& rng, int mesh_dims, int rank) {
  std::vector<std::string> placements(mesh_dims);
  std::vector<int> next_index(rank, 0);
  std::vector<int> dims(mesh_dims);
  for (int m = 0; m < mesh_dims; ++m) dims[m] = m;
  std::shuffle(dims.begin(), dims.end(), rng);
  for (int m : dims) {
    const int kind = static_cast<int>(rng() % 6);
    if (kind < 2) {
      placements[m] = "R";
    } else if (kind < 4) {
      const int t = static_cast<int>(rng() % rank);
      placements[m] = absl::StrCat("S(", t, ")[", next_index[t]++, "]");
    } else {
      placements[m] = kind == 4 ? "P(sum)" : "P(avg)";
    }
  }
  return absl::StrJoin(placements, ",");
}

// Cold planning of 30 requests on torchtitan-style 6- and 7-D meshes
// (tensor rank 1-3, bf16, dims 64-8192), then the all-size-2 8-D request
// of the planning-speed work, each planned once: the latency spread, the
// most states one request expanded, its largest search tables, how many
// requests fell back past the search's budget and how many missed the
// planning-speed targets (100 ms, 64 MB of search tables).
void BM_OptimalHighDim(benchmark::State& state) {
  std::mt19937_64 rng(7);
  std::vector<std::pair<Mesh, PlanRequest>> corpus;
  for (int i = 0; i < 30; ++i) {
    Mesh mesh = HighDimMesh(rng);
    const int rank = 1 + static_cast<int>(rng() % 3);
    std::vector<int64_t> shape;
    for (int k = 0; k < rank; ++k) shape.push_back(64 << (rng() % 8));
    PlanRequest request = *ParsePlanRequest(
        mesh, shape, "bf16", HighDimState(rng, mesh.ndim(), rank),
        HighDimState(rng, mesh.ndim(), rank), PlanOptions());
    corpus.emplace_back(std::move(mesh), std::move(request));
  }
  MeshSpec eight;
  eight.shape.assign(8, 2);
  eight.dim_names = {"pp", "dpr", "dps", "cp", "tp", "ep", "x", "y"};
  const Mesh mesh8 = *Mesh::Create(eight);
  corpus.emplace_back(
      mesh8, *ParsePlanRequest(mesh8, {4096, 4096, 64}, "bf16",
                               "S(0),R,S(1),P(sum),R,S(0),R,P(sum)",
                               "R,S(1),R,R,S(0),R,P(sum),R", PlanOptions()));
  std::vector<double> micros;
  int64_t most_states = 0, most_bytes = 0, fell_back = 0;
  int64_t over_time = 0, over_memory = 0;
  for (auto _ : state) {
    for (const auto& [mesh, request] : corpus) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<Plan> plan = MakePlan(mesh, request);
      micros.push_back(std::chrono::duration<double, std::micro>(
                           std::chrono::steady_clock::now() - start)
                           .count());
      over_time += micros.back() > 100e3;
      over_memory += plan->search_bytes > 64'000'000;
      most_states = std::max(most_states, plan->states_expanded);
      most_bytes = std::max(most_bytes, plan->search_bytes);
      fell_back += std::any_of(
          plan->warnings.begin(), plan->warnings.end(), [](const Warning& w) {
            return w.code == WarningCode::kSearchBudgetExceeded;
          });
    }
  }
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p90_us"] = micros[micros.size() * 9 / 10];
  state.counters["max_us"] = micros.back();
  state.counters["max_states"] = static_cast<double>(most_states);
  state.counters["max_search_MB"] = static_cast<double>(most_bytes) / 1e6;
  state.counters["fell_back"] = static_cast<double>(fell_back);
  state.counters["over_100ms"] = static_cast<double>(over_time);
  state.counters["over_64MB"] = static_cast<double>(over_memory);
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
BENCHMARK_CAPTURE(BM_OptimalRandom, existing, FlattenPolicy::kExisting)
    ->DenseRange(3, 5)
    ->ArgName("mesh_dims");
BENCHMARK_CAPTURE(BM_OptimalRandom, any, FlattenPolicy::kAny)
    ->DenseRange(3, 5)
    ->ArgName("mesh_dims");
BENCHMARK_CAPTURE(BM_OptimalRandom, none, FlattenPolicy::kNone)
    ->DenseRange(3, 5)
    ->ArgName("mesh_dims");
BENCHMARK(BM_OptimalCopyRate)->Apply(Args);
BENCHMARK(BM_OptimalHighDim)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OptimalCached)->DenseRange(1, 5)->ArgName("mesh_dims");

}  // namespace
}  // namespace reshard

BENCHMARK_MAIN();
