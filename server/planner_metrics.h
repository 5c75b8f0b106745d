// The Planner's metrics (docs/DESIGN.md §7) in two halves:
//  - PlannerMetrics: what PlannerService records as calls happen — plans by
//    planner and status code, planning time, states expanded, warnings, and
//    its RPCs (RpcMetrics). Series are resolved once and cached, so a cached
//    plan costs a few atomic increments and one histogram observation.
//  - AddPlannerReadings: what is read at scrape time from the objects that
//    own it — plan cache entries, hits and misses (PlanCache), meshes
//    (MeshRegistry), calls in flight and the drain state (PlannerService).
// The core library knows nothing of either. Thread-safe.
#ifndef RESHARD_SERVER_PLANNER_METRICS_H_
#define RESHARD_SERVER_PLANNER_METRICS_H_

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "metrics/metrics_endpoint.h"
#include "planner/core/plan.h"
#include "planner/search/plan_cache.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/mesh_registry.h"
#include "server/planning_pool.h"
#include "server/rpc_metrics.h"

namespace reshard::server {

class PlannerService;

// Bucket bounds of reshard_search_states_expanded: 0 (torch_greedy, trivial
// requests), then a 1-3 ladder up to 3,000,000 (past the largest budget).
std::vector<double> StatesExpandedBuckets();

// The series PlannerService records into as calls and plans finish. Built
// once at start-up; recording is thread-safe and takes no lock of ours.
class PlannerMetrics {
 public:
  // Builds the Planner's families on `registry` (and RpcMetrics' two).
  explicit PlannerMetrics(prometheus::Registry& registry);

  RpcMetrics& rpc() { return rpc_; }

  // A plan request for `planner` refused before planning (malformed, over a
  // limit): reshard_plan_requests_total only.
  void RecordRefused(PlannerKind planner, absl::StatusCode code) {
    plans_[Index(planner)]->requests.Increment(code);
  }
  // A plan request answered by MakePlanCached in `seconds`: counted by
  // code; a plan from the cache adds nothing else (PlanCache counts hits);
  // planning (a miss, successful or not) is timed and, when it produced a
  // plan, its states expanded observed. Every returned plan's warnings are
  // counted by code, cached ones included (each is a response that carried
  // it).
  void RecordPlanned(PlannerKind planner, const absl::StatusOr<Plan>& plan,
                     double seconds);
  // A search the planning pool refused (its queue full):
  // reshard_planning_refused_total{reason}.
  void RecordPlanningRefused(PlanningPool::Refusal reason) {
    (reason == PlanningPool::Refusal::kQueueFull ? refused_queue_
                                                 : refused_credential_)
        ->Increment();
  }

 private:
  struct PerPlanner {
    PerPlanner(prometheus::Family<prometheus::Counter>& requests,
               prometheus::Family<prometheus::Histogram>& durations,
               PlannerKind planner);
    StatusCodeCounters requests;
    prometheus::Histogram& duration;
  };
  static int Index(PlannerKind planner) { return static_cast<int>(planner); }

  RpcMetrics rpc_;
  std::array<std::unique_ptr<PerPlanner>, kPlannerKindCount> plans_;
  prometheus::Histogram& states_expanded_;
  prometheus::Histogram& search_bytes_;
  prometheus::Counter* refused_queue_;
  prometheus::Counter* refused_credential_;
  std::array<prometheus::Counter*, kWarningCodeCount> warnings_;
};

// Adds the figures read at each scrape: reshard_plan_cache_entries,
// reshard_plan_cache_capacity, reshard_plan_cache_hits_total,
// reshard_plan_cache_misses_total, reshard_meshes, reshard_meshes_capacity,
// reshard_rpc_requests_in_flight, reshard_draining and, with a `pool`,
// reshard_planning_queue_depth and reshard_planning_searches_running. The
// readers keep references: the endpoint must stop before these objects go
// away.
void AddPlannerReadings(metrics::ScrapeReadings& readings,
                        const PlannerService& service,
                        const MeshRegistry& registry, const PlanCache& cache,
                        const PlanningPool* pool = nullptr);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_PLANNER_METRICS_H_
