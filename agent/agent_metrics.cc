#include "agent/agent_metrics.h"

#include "metrics/latency_buckets.h"
#include "metrics/size_bucket.h"
#include "planner/core/step.h"
#include "run_values/run_summary.h"

namespace reshard::agent {
namespace {

// Registered once per registry; BuildCounter on a name already registered
// returns the same family.
prometheus::Family<prometheus::Counter>& TransferBytes(
    prometheus::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("reshard_transfer_bytes_total")
      .Help(
          "Bytes of cross-mesh transfers between this rank and others, by "
          "direction (every execution, warmup included)")
      .Register(registry);
}

}  // namespace

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
      executions_failed_(executions_.Add({{"result", "failed"}})),
      communicators_created_(
          prometheus::BuildCounter()
              .Name("reshard_communicators_created_total")
              .Help("Sets of communicators this agent opened, one per "
                    "comm_prefix; a run that reuses the kept ones adds none")
              .Register(registry)
              .Add({})),
      transfer_sent_(TransferBytes(registry).Add({{"direction", "sent"}})),
      transfer_received_(
          TransferBytes(registry).Add({{"direction", "received"}})),
      transfer_duration_(
          prometheus::BuildHistogram()
              .Name("reshard_transfer_duration_seconds")
              .Help("A cross-mesh run's point-to-point transfers on this "
                    "rank, one observation per run: the median of its timed "
                    "iterations")
              .Register(registry)
              .Add({}, metrics::LatencyBuckets())),
      cross_compiled_(
          prometheus::BuildCounter()
              .Name("reshard_cross_runners_compiled_total")
              .Help("Cross-mesh runners this agent compiled; the repeated "
                    "runs of a prepared schedule reuse theirs and add none")
              .Register(registry)
              .Add({})) {
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
  auto [it, added] = steps_.try_emplace({op, group});
  if (added) {
    const prometheus::Labels labels = {{"op", op}, {"group", group}};
    it->second = {&durations_.Add(labels, metrics::LatencyBuckets()),
                  &bytes_.Add(labels)};
  }
  return it->second;
}

prometheus::Gauge& AgentMetrics::BusbwFor(const RowSample& row) {
  const std::string size = metrics::SizeBucket(row.bytes);
  auto [it, added] = busbw_series_.try_emplace(
      {row.op, row.group, row.group_size, size}, nullptr);
  if (added) {
    it->second = &busbw_.Add({{"op", row.op},
                              {"group", row.group},
                              {"group_size", std::to_string(row.group_size)},
                              {"size", size}});
  }
  return *it->second;
}

void AgentMetrics::RecordRows(const RunSetup& setup,
                              const executor::RankReport& report) {
  const executor::RunSummary summary =
      executor::Summarize(setup.mesh, setup.work, {report});
  const std::vector<executor::RunRow> rows = setup.work.Rows(setup.mesh);
  const int executions = executor::TotalExecutions(setup.options);
  for (size_t r = 0; r < rows.size(); ++r) {
    const executor::SummaryRow& row = summary.rows[r];
    // Size-1 groups and a plan's local steps move nothing between ranks; a
    // row without a time did not run (the run failed before it).
    if (!IsCollective(rows[r].op) || setup.mesh.GroupSize(rows[r].group) == 1 ||
        row.seconds_median <= 0) {
      continue;
    }
    RecordRow({row.op, groups_.Admit(row.group),
               setup.mesh.GroupSize(rows[r].group), row.bytes, executions,
               row.seconds_median, row.busbw_gbps});
  }
}

void AgentMetrics::RecordRow(const RowSample& row) {
  StepSeries& series = SeriesFor(row.op, row.group);
  series.duration->Observe(row.seconds_median);
  series.bytes->Increment(static_cast<double>(row.bytes) * row.executions);
  BusbwFor(row).Set(row.busbw_gbps);
}

void AgentMetrics::RecordResult(const absl::Status& status, bool validated) {
  if (status.ok() && validated) {
    executions_ok_.Increment();
    return;
  }
  executions_failed_.Increment();
  const ErrorKind kind =
      status.ok() ? ErrorKind::kValidation : ErrorKindOf(status);
  errors_[kind]->Increment();
}

void AgentMetrics::RecordTransfers(const RunSetup& setup,
                                   const executor::RankReport& report) {
  const int executions = report.executions_done;
  int64_t sent = 0, received = 0;
  for (const executor::CrossWork& work : setup.cross->items) {
    sent += work.SentBytes(report.rank);
    received += work.ReceivedBytes(report.rank);
  }
  transfer_sent_.Increment(static_cast<double>(sent * executions));
  transfer_received_.Increment(static_cast<double>(received * executions));
  const size_t row = executor::kTransfersRow;
  if (report.seconds_median.size() > row && report.seconds_median[row] > 0) {
    transfer_duration_.Observe(report.seconds_median[row]);
  }
}

void AgentMetrics::RecordRun(const RunSetup& setup,
                             const executor::RankReport& report) {
  if (setup.is_cross()) {
    RecordTransfers(setup, report);
  } else {
    RecordRows(setup, report);
  }
  RecordResult(report.status, !report.WhyNotValidated().has_value());
}

void AgentMetrics::RecordRefusal(const absl::Status& status) {
  RecordResult(status, false);
}

}  // namespace reshard::agent
