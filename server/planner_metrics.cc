#include "server/planner_metrics.h"

#include <string>

#include "server/planner_service.h"

namespace reshard::server {

std::vector<double> StatesExpandedBuckets() {
  return {0,    1,     3,     10,     30,     100,     300,    1000,
          3000, 10000, 30000, 100000, 300000, 1000000, 3000000};
}

namespace {

// 1 MiB to 16 GiB by factors of 4.
std::vector<double> SearchBytesBuckets() {
  std::vector<double> bounds;
  for (double b = 1 << 20; b <= 17179869184.0; b *= 4) bounds.push_back(b);
  return bounds;
}

prometheus::Family<prometheus::Counter>& RefusedFamily(
    prometheus::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("reshard_planning_refused_total")
      .Help(
          "Heavy searches the planning pool refused, by reason "
          "(--planning_queue, --planning_queue_per_credential)")
      .Register(registry);
}

}  // namespace

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
              .Add({}, StatesExpandedBuckets())),
      search_bytes_(prometheus::BuildHistogram()
                        .Name("reshard_search_memory_peak_bytes")
                        .Help("Bytes the optimal search's tables allocated "
                              "at most, per search (cache misses)")
                        .Register(registry)
                        .Add({}, SearchBytesBuckets())) {
  auto& refused = RefusedFamily(registry);
  refused_queue_ = &refused.Add({{"reason", "queue_full"}});
  refused_credential_ = &refused.Add({{"reason", "credential_queue_full"}});
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
    if (plan->search_bytes > 0) {
      search_bytes_.Observe(static_cast<double>(plan->search_bytes));
    }
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
                        const MeshRegistry& registry, const PlanCache& cache,
                        const PlanningPool* pool) {
  AddCacheReadings(readings, cache);
  if (pool != nullptr) {
    readings.AddGauge(
        "reshard_planning_queue_depth",
        "Heavy searches waiting for a planning worker (--planning_queue)", {},
        [pool] { return static_cast<double>(pool->queued()); });
    readings.AddGauge(
        "reshard_planning_searches_running",
        "Heavy searches on a planning worker now (--planning_workers)", {},
        [pool] { return static_cast<double>(pool->running()); });
  }
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
