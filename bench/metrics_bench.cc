// What metrics cost the planner service per call and per scrape, measured
// apart from gRPC: recording one cached Plan call as PlannerService does with
// --metrics_listen (two clock reads, a request counter, the RPC latency
// histogram, the plan counter), on one thread and on two at once; and one
// scrape (collect every family and reading, serialize the text). The
// end-to-end QPS comparison is bench/metrics_overhead.sh. Results and the
// commands: docs/PERFORMANCE.md.
#include <chrono>

#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "planner/core/plan.h"
#include "planner/search/plan_cache.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "server/mesh_registry.h"
#include "server/planner_metrics.h"
#include "server/planner_service.h"

namespace reshard::server {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// One PlannerMetrics shared by every benchmark thread, as in the server.
PlannerMetrics& SharedMetrics() {
  static prometheus::Registry* registry = new prometheus::Registry();
  static PlannerMetrics* metrics = new PlannerMetrics(*registry);
  return *metrics;
}

void BM_RecordCachedPlanCall(benchmark::State& state) {
  PlannerMetrics& metrics = SharedMetrics();
  RpcMethodMetrics& plan_rpc = metrics.rpc().Method("Plan");
  Plan plan;
  plan.cache_hit = true;
  const absl::StatusOr<Plan> result = plan;
  for (auto _ : state) {
    const auto call_start = std::chrono::steady_clock::now();
    const auto plan_start = std::chrono::steady_clock::now();
    metrics.RecordPlanned(PlannerKind::kOptimal, result,
                          SecondsSince(plan_start));
    plan_rpc.Record(absl::StatusCode::kOk, SecondsSince(call_start));
  }
}
BENCHMARK(BM_RecordCachedPlanCall)->Threads(1)->Threads(2)->UseRealTime();

void BM_Scrape(benchmark::State& state) {
  auto registry = std::make_shared<prometheus::Registry>();
  PlannerMetrics metrics(*registry);
  MeshRegistry meshes(1000);
  PlanCache cache(10000);
  // The server's page: every method's series, the readings, a code or two.
  PlannerService service(meshes, cache, {}, &metrics);
  metrics.rpc().Method("Plan").Record(absl::StatusCode::kInvalidArgument, 0);
  metrics::ScrapeReadings readings;
  AddPlannerReadings(readings, service, meshes, cache);
  const prometheus::TextSerializer serializer;
  size_t bytes = 0;
  for (auto _ : state) {
    std::vector<prometheus::MetricFamily> families = registry->Collect();
    for (prometheus::MetricFamily& family : readings.Collect()) {
      families.push_back(std::move(family));
    }
    bytes = serializer.Serialize(families).size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Scrape);

}  // namespace
}  // namespace reshard::server

BENCHMARK_MAIN();
