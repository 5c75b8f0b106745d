#include "executor/agent/agent_metrics.h"

#include "executor/run_summary.h"
#include "metrics/latency_buckets.h"
#include "planner/step.h"

namespace reshard::agent {

AgentMetrics::AgentMetrics(prometheus::Registry& registry)
    : durations_(prometheus::BuildHistogram()
                     .Name("reshard_collective_duration_seconds")
                     .Help("Collective step time on this rank, one "
                           "observation per run: the median of its timed "
                           "iterations")
                     .Register(registry)),
      bytes_(prometheus::BuildCounter()
                 .Name("reshard_collective_bytes_total")
                 .Help("Buffer bytes of the collective steps this rank ran "
                       "(every execution, warmup included)")
                 .Register(registry)),
      busbw_(prometheus::BuildGauge()
                 .Name("reshard_collective_busbw_gbytes_per_second")
                 .Help("Bus bandwidth of the step in the last run on this "
                       "rank, GB/s (10^9 bytes/s), nccl-tests' convention")
                 .Register(registry)),
      executions_(prometheus::BuildCounter()
                      .Name("reshard_plan_executions_total")
                      .Help("Plan runs on this rank by result (ok: ran and "
                            "validated)")
                      .Register(registry)),
      executions_ok_(executions_.Add({{"result", "ok"}})),
      executions_failed_(executions_.Add({{"result", "failed"}})) {
  auto& errors = prometheus::BuildCounter()
                     .Name("reshard_executor_errors_total")
                     .Help("Failed runs on this rank by kind of failure")
                     .Register(registry);
  for (ErrorKind kind : kAllErrorKinds) {
    errors_[kind] = &errors.Add({{"kind", std::string(ErrorKindName(kind))}});
  }
}

AgentMetrics::StepSeries& AgentMetrics::SeriesFor(const std::string& op,
                                                  const std::string& group) {
  const std::string label = groups_.Admit(group);
  auto [it, added] = steps_.try_emplace({op, label});
  if (added) {
    const prometheus::Labels labels = {{"op", op}, {"group", label}};
    it->second = {&durations_.Add(labels, LatencyBuckets()),
                  &bytes_.Add(labels), &busbw_.Add(labels)};
  }
  return it->second;
}

void AgentMetrics::RecordSteps(const Mesh& mesh, const Plan& plan,
                               const executor::RankOptions& options,
                               const executor::RankReport& report) {
  const executor::RunSummary summary =
      executor::Summarize(mesh, plan, {report});
  const int executions = executor::TotalExecutions(options);
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& step = plan.steps[k];
    const executor::StepRow& row = summary.steps[k];
    // Size-1 groups and local steps move nothing between ranks; a step
    // without a time did not run (the run failed before it).
    if (!IsCollective(step.op) || mesh.GroupSize(step.group) == 1 ||
        row.seconds_median <= 0) {
      continue;
    }
    StepSeries& series = SeriesFor(row.op, row.group);
    series.duration->Observe(row.seconds_median);
    series.bytes->Increment(static_cast<double>(row.bytes) * executions);
    series.busbw->Set(row.busbw_gbps);
  }
}

void AgentMetrics::RecordResult(const executor::RankReport& report) {
  if (report.status.ok() && report.validated) {
    executions_ok_.Increment();
    return;
  }
  executions_failed_.Increment();
  const ErrorKind kind =
      report.status.ok() ? ErrorKind::kValidation : ErrorKindOf(report.status);
  errors_[kind]->Increment();
}

void AgentMetrics::RecordRun(const Mesh& mesh, const Plan& plan,
                             const executor::RankOptions& options,
                             const executor::RankReport& report) {
  RecordSteps(mesh, plan, options, report);
  RecordResult(report);
}

void AgentMetrics::RecordRefusal(const absl::Status& status) {
  executor::RankReport report;
  report.status = status;
  RecordResult(report);
}

}  // namespace reshard::agent
