#include "server/planner_metrics.h"

#include <string>

#include "server/planner_service.h"

namespace reshard::server {

std::vector<double> StatesExpandedBuckets() {
  return {0,    1,     3,     10,     30,     100,     300,    1000,
          3000, 10000, 30000, 100000, 300000, 1000000, 3000000};
}

PlannerMetrics::PerPlanner::PerPlanner(
    prometheus::Family<prometheus::Counter>& requests,
    prometheus::Family<prometheus::Histogram>& durations, PlannerKind planner)
    : requests(requests, {{"planner", std::string(PlannerName(planner))}}),
      duration(durations.Add({{"planner", std::string(PlannerName(planner))}},
                             metrics::LatencyBuckets())) {}

PlannerMetrics::PlannerMetrics(prometheus::Registry& registry)
    : rpc_(registry),
      states_expanded_(
          prometheus::BuildHistogram()
              .Name("reshard_search_states_expanded")
              .Help("States a planner expanded per plan it computed (cache "
                    "misses)")
              .Register(registry)
              .Add({}, StatesExpandedBuckets())) {
  auto& requests = prometheus::BuildCounter()
                       .Name("reshard_plan_requests_total")
                       .Help(
                           "Plan requests (Plan calls and PlanBatch items) "
                           "by requested planner and status code")
                       .Register(registry);
  auto& durations = prometheus::BuildHistogram()
                        .Name("reshard_plan_duration_seconds")
                        .Help(
                            "Time to compute a plan (cache misses), by "
                            "requested planner")
                        .Register(registry);
  for (int p = 0; p < kPlannerKindCount; ++p) {
    plans_[p] = std::make_unique<PerPlanner>(requests, durations,
                                             static_cast<PlannerKind>(p));
  }
  auto& warnings = prometheus::BuildCounter()
                       .Name("reshard_plan_warnings_total")
                       .Help("Warnings in returned plans, by warning code")
                       .Register(registry);
  for (int w = 0; w < kWarningCodeCount; ++w) {
    warnings_[w] = &warnings.Add(
        {{"code", std::string(WarningCodeName(static_cast<WarningCode>(w)))}});
  }
}

void PlannerMetrics::RecordPlanned(PlannerKind planner,
                                   const absl::StatusOr<Plan>& plan,
                                   double seconds) {
  PerPlanner& per_planner = *plans_[Index(planner)];
  per_planner.requests.Increment(plan.status().code());
  if (!plan.ok()) {
    per_planner.duration.Observe(seconds);
    return;
  }
  if (!plan->cache_hit) {
    per_planner.duration.Observe(seconds);
    states_expanded_.Observe(static_cast<double>(plan->states_expanded));
  }
  for (const Warning& warning : plan->warnings) {
    warnings_[static_cast<int>(warning.code)]->Increment();
  }
}

namespace {

void AddCacheReadings(metrics::ScrapeReadings& readings,
                      const PlanCache& cache) {
  readings.AddGauge("reshard_plan_cache_entries", "Plans in the plan cache", {},
                    [&cache] { return static_cast<double>(cache.size()); });
  readings.AddGauge(
      "reshard_plan_cache_capacity",
      "Most plans the plan cache holds (--cache_entries); LRU beyond", {},
      [&cache] { return static_cast<double>(cache.capacity()); });
  readings.AddCounter("reshard_plan_cache_hits_total",
                      "Plan cache lookups that found a plan", {},
                      [&cache] { return static_cast<double>(cache.hits()); });
  readings.AddCounter(
      "reshard_plan_cache_misses_total",
      "Plan cache lookups that found none (the request was planned)", {},
      [&cache] { return static_cast<double>(cache.misses()); });
}

}  // namespace

void AddPlannerReadings(metrics::ScrapeReadings& readings,
                        const PlannerService& service,
                        const MeshRegistry& registry, const PlanCache& cache) {
  AddCacheReadings(readings, cache);
  readings.AddGauge("reshard_meshes", "Meshes registered", {}, [&registry] {
    return static_cast<double>(registry.size());
  });
  readings.AddGauge(
      "reshard_meshes_capacity",
      "Most meshes the registry holds (--max_meshes)", {},
      [&registry] { return static_cast<double>(registry.capacity()); });
  readings.AddGauge(
      "reshard_rpc_requests_in_flight", "Planner calls in their handlers now",
      {}, [&service] { return static_cast<double>(service.in_flight()); });
  readings.AddGauge(
      "reshard_draining",
      "1 while the server drains after SIGTERM (new calls get UNAVAILABLE)", {},
      [&service] { return service.draining() ? 1.0 : 0.0; });
}

}  // namespace reshard::server
