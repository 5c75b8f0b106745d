// reshard-agent's metrics (docs/DESIGN.md §7), recorded once per run from what
// the run reported, so the plan runner itself never touches prometheus:
//  - reshard_plan_executions_total{result}: ok (ran and validated) or failed;
//  - reshard_executor_errors_total{kind}: why a run failed (error_kind.h);
//  - reshard_communicators_created_total: the sets of communicators opened
//    (one per comm_prefix the Coordinator hands out; kept across runs, so
//    it stays still while runs reuse them);
//  - per collective step with peers, labelled op and group (mesh-dim names
//    joined by `_`, capped at metrics::LabelCap::kGroupCap per process):
//    reshard_collective_duration_seconds (histogram; one observation per
//    run: the step's median over the run's timed iterations),
//    reshard_collective_bytes_total (the step's buffer bytes, docs/DESIGN.md
//    §3.3, times the run's executions, warmup included) and
//    reshard_collective_busbw_gbytes_per_second (gauge: the last run's
//    busbw, nccl-tests' convention, as `reshardctl exec` prints it), also
//    labelled `group_size` (ranks) and `size` (the step's bytes,
//    metrics/size_bucket.h): busbw depends on both, so a series compares
//    like with like.
//  - a cross-mesh run's point-to-point transfers (docs/DESIGN.md §9):
//    reshard_transfer_bytes_total{direction} (sent or received: bytes to
//    or from other ranks, times the run's executions) and
//    reshard_transfer_duration_seconds (histogram; one observation per run:
//    the transfers' median over its timed iterations), and
//    reshard_cross_runners_compiled_total (a prepared schedule's repeated
//    runs compile none). No ranks or tensor names in labels (§7).
// Every result and kind series exists from the start at 0, so rates and
// alerts work before the first failure. Recording happens on the agent's
// run thread; scrapes read prometheus-cpp's atomics.
#ifndef RESHARD_AGENT_AGENT_METRICS_H_
#define RESHARD_AGENT_AGENT_METRICS_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "agent/run_work.h"
#include "common/error_kind.h"
#include "metrics/label_cap.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "run_values/rank_report.h"

namespace reshard::agent {

class AgentMetrics {
 public:
  // Builds the agent's families on `registry`.
  explicit AgentMetrics(prometheus::Registry& registry);

  // A run that got as far as a mesh and its work (its report may still
  // carry a failure): the rows that ran are recorded, then the result.
  void RecordRun(const RunSetup& setup, const executor::RankReport& report);
  // A run refused before it had a mesh and plan (a bad RunWork).
  void RecordRefusal(const absl::Status& status);
  // A set of communicators was opened (agent/communicator_cache.h).
  void RecordCommunicatorsCreated() { communicators_created_.Increment(); }
  // A cross-mesh run compiled its CrossRunner (executor/run/cross_runner.h).
  void RecordCrossCompile() { cross_compiled_.Increment(); }

 private:
  struct StepSeries {
    prometheus::Histogram* duration;
    prometheus::Counter* bytes;
  };
  // One collective row that ran.
  struct RowSample {
    std::string op;
    std::string group;  // its label, capped
    int64_t group_size = 0;
    int64_t bytes = 0;  // per execution
    int executions = 0;
    double seconds_median = 0;
    double busbw_gbps = 0;
  };
  // `group` is the capped label.
  StepSeries& SeriesFor(const std::string& op, const std::string& group);
  prometheus::Gauge& BusbwFor(const RowSample& row);
  void RecordRows(const RunSetup& setup, const executor::RankReport& report);
  void RecordTransfers(const RunSetup& setup,
                       const executor::RankReport& report);
  // Its median, its bytes times the executions, its busbw.
  void RecordRow(const RowSample& row);
  void RecordResult(const absl::Status& status, bool validated);

  prometheus::Family<prometheus::Histogram>& durations_;
  prometheus::Family<prometheus::Counter>& bytes_;
  prometheus::Family<prometheus::Gauge>& busbw_;
  prometheus::Family<prometheus::Counter>& executions_;
  prometheus::Counter& executions_ok_;
  prometheus::Counter& executions_failed_;
  absl::flat_hash_map<ErrorKind, prometheus::Counter*> errors_;
  prometheus::Counter& communicators_created_;
  prometheus::Counter& transfer_sent_;
  prometheus::Counter& transfer_received_;
  prometheus::Histogram& transfer_duration_;
  prometheus::Counter& cross_compiled_;
  metrics::LabelCap groups_{metrics::LabelCap::kGroupCap};
  // By (op, group label); node-based so references stay valid.
  absl::node_hash_map<std::pair<std::string, std::string>, StepSeries> steps_;
  // By (op, group label, group size, size bucket).
  absl::flat_hash_map<
      std::tuple<std::string, std::string, int64_t, std::string>,
      prometheus::Gauge*>
      busbw_series_;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_AGENT_METRICS_H_
