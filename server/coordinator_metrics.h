// The Coordinator's metrics (docs/DESIGN.md §7) on the Planner's registry:
//  - recorded as calls finish: its RPCs (RpcMetrics, method = the gRPC
//    method name), reshard_job_runs_total{result} and
//    reshard_job_run_duration_seconds (each RunJob that reached a job);
//  - read at scrape time from the Coordinator: reshard_jobs and
//    reshard_agents{state} (connected: dispatch stream open; disconnected:
//    joined, stream closed).
// Labels carry closed sets only (no job names or ranks). Thread-safe.
#ifndef RESHARD_SERVER_COORDINATOR_METRICS_H_
#define RESHARD_SERVER_COORDINATOR_METRICS_H_

#include <array>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "coordinator/coordinator.h"
#include "metrics/metrics_endpoint.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/rpc_metrics.h"

namespace reshard::server {

// How a RunJob ended, the `result` label of reshard_job_runs_total.
enum class JobRunResult {
  kValidated,     // every rank ran and validated
  kNotValidated,  // every rank ran; a result was wrong
  kFailed,        // a rank failed or was lost
  kCancelled,     // CancelJob or the caller went away
  kTimedOut,      // the deadline passed (waiting for the job or its ranks)
  kRefused,  // never dispatched: bad request, unknown job, its token, a limit
};
inline constexpr int kJobRunResultCount = 6;

// The result of a RunJob that ended with `status` (OK: by `validated`).
JobRunResult JobRunResultOf(const absl::Status& status, bool validated);

class CoordinatorMetrics {
 public:
  explicit CoordinatorMetrics(prometheus::Registry& registry);

  // Method `method`'s series (null for a name not the service's).
  RpcMethodMetrics* Method(const std::string& method) const {
    auto it = methods_.find(method);
    return it == methods_.end() ? nullptr : it->second;
  }
  // One finished Coordinator call. `method` is one of the service's.
  void RecordCall(const std::string& method, absl::StatusCode code,
                  double seconds);
  // One RunJob: counted by result; its duration observed unless refused.
  void RecordRun(JobRunResult result, double seconds);

 private:
  RpcMetrics rpc_;
  std::map<std::string, RpcMethodMetrics*> methods_;  // fixed at build
  std::array<prometheus::Counter*, kJobRunResultCount> runs_;
  prometheus::Histogram& run_duration_;
};

// reshard_jobs, reshard_agents{state} and reshard_legacy_job_tokens_total
// (calls let in with a self-chosen job token, so operators see who still
// needs issuing), read from `core` at each scrape (the endpoint must stop
// before `core` goes away).
void AddCoordinatorReadings(metrics::ScrapeReadings& readings,
                            const coordinator::Coordinator& core);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_COORDINATOR_METRICS_H_
