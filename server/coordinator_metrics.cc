#include "server/coordinator_metrics.h"

#include <vector>

namespace reshard::server {
namespace {

constexpr const char* kJobRunResultNames[kJobRunResultCount] = {
    "validated", "not_validated", "failed",
    "cancelled", "timed_out",     "refused"};

// Every Coordinator RPC: a call of a method not listed is not counted.
constexpr const char* kMethods[] = {
    "Join",      "Dispatch",         "Report",        "Progress",
    "Leave",     "StoreSet",         "StoreGet",      "StoreDelete",
    "RunJob",    "ListJobs",         "GetJob",        "CancelJob",
    "Committed", "PrepareCrossMesh", "DeleteSchedule"};

// Runs last from well under a second (a tiny plan) to many minutes.
std::vector<double> RunDurationBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
          2.5,   5,      10,    25,   50,    100,  250, 500,  1000};
}

// Agents of every job by whether their dispatch stream is open.
double CountAgents(const coordinator::Coordinator& core, bool connected) {
  double count = 0;
  for (const coordinator::JobSnapshot& job : core.AllJobs()) {
    count += static_cast<double>(connected ? job.agents_connected
                                           : job.agents_joined -
                                                 job.agents_connected);
  }
  return count;
}

}  // namespace

JobRunResult JobRunResultOf(const absl::Status& status, bool validated) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return validated ? JobRunResult::kValidated : JobRunResult::kNotValidated;
    case absl::StatusCode::kCancelled:
      return JobRunResult::kCancelled;
    case absl::StatusCode::kDeadlineExceeded:
      return JobRunResult::kTimedOut;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return JobRunResult::kRefused;
    default:
      return JobRunResult::kFailed;
  }
}

CoordinatorMetrics::CoordinatorMetrics(prometheus::Registry& registry)
    : rpc_(registry),
      run_duration_(prometheus::BuildHistogram()
                        .Name("reshard_job_run_duration_seconds")
                        .Help("RunJob calls that reached a job, from the "
                              "call to its answer (waiting for agents "
                              "included)")
                        .Register(registry)
                        .Add({}, RunDurationBuckets())) {
  for (const char* method : kMethods) methods_[method] = &rpc_.Method(method);
  auto& runs = prometheus::BuildCounter()
                   .Name("reshard_job_runs_total")
                   .Help("RunJob calls by how they ended")
                   .Register(registry);
  for (int r = 0; r < kJobRunResultCount; ++r) {
    runs_[r] = &runs.Add({{"result", kJobRunResultNames[r]}});
  }
}

void CoordinatorMetrics::RecordCall(const std::string& method,
                                    absl::StatusCode code, double seconds) {
  if (RpcMethodMetrics* series = Method(method)) series->Record(code, seconds);
}

void CoordinatorMetrics::RecordRun(JobRunResult result, double seconds) {
  runs_[static_cast<int>(result)]->Increment();
  if (result != JobRunResult::kRefused) run_duration_.Observe(seconds);
}

void AddCoordinatorReadings(metrics::ScrapeReadings& readings,
                            const coordinator::Coordinator& core) {
  readings.AddGauge("reshard_jobs", "Jobs the Coordinator holds", {},
                    [&core] { return core.AllJobs().size(); });
  for (bool connected : {true, false}) {
    readings.AddGauge(
        "reshard_agents",
        "Joined agents by state (connected: dispatch stream open)",
        {{"state", connected ? "connected" : "disconnected"}},
        [&core, connected] { return CountAgents(core, connected); });
  }
  readings.AddCounter(
      "reshard_legacy_job_tokens_total",
      "Calls let in with a self-chosen, not issued, job token "
      "(--legacy_job_tokens)",
      {}, [&core] {
        return static_cast<double>(core.token_rules().legacy_tokens_accepted());
      });
}

}  // namespace reshard::server
