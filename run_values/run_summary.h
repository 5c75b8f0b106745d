// What a run on every rank amounts to (docs/DESIGN.md §6.3, §8): one row per
// row of the work (a plan's steps, a batch's buckets) with the slowest rank's
// times, every tensor's checksums by rank and verdict, the whole work's
// time per run and the largest measured peak. `reshardctl exec` and the
// Coordinator both aggregate their ranks' RankReports here, so a run
// reports the same numbers whichever way it was launched.
#ifndef RESHARD_RUN_VALUES_RUN_SUMMARY_H_
#define RESHARD_RUN_VALUES_RUN_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "planner/core/mesh.h"
#include "run_values/batch_work.h"
#include "run_values/rank_report.h"

namespace reshard::executor {

// One row: its bytes (docs/DESIGN.md §3.3; a bucket's: its members' packed),
// the slowest rank's min and median seconds, algbw = bytes / median and busbw
// = algbw x the nccl-tests factor, in GB/s (10^9 bytes/s).
struct SummaryRow {
  std::string op;
  std::string group;
  int64_t members = 1;
  int64_t bytes = 0;
  double seconds_min = 0;     // slowest rank's
  double seconds_median = 0;  // slowest rank's
  // Per timed execution the slowest rank's seconds, their median: what a
  // run of the work pays, where the slowest rank changes from execution
  // to execution (docs/notes/2026-11-28-calibration-what-a-run-pays.md,
  // "Calibration on what a run pays"). 0 when the reports carry no executions.
  double slowest_median_seconds = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  double model_seconds = 0;  // the plan's cost model for the row
};

struct TensorRow {
  std::string name;
  std::vector<uint64_t> checksums;  // by global rank, ascending
  bool validated = true;
  std::string why_not;  // the first rank (ascending) that did not validate
  // A run on registered tensors: the conservation label and checksums
  // (every rank computes the same; the first's).
  std::string conservation;
  uint64_t conservation_source = 0;
  uint64_t conservation_result = 0;
};

// A whole run. `wall_seconds` is the launcher's to fill (Summarize leaves
// it 0).
struct RunSummary {
  std::vector<SummaryRow> rows;
  std::vector<TensorRow> tensors;  // by item
  bool validated = true;
  // The first tensor that did not validate ("rank 3: ..." for one tensor,
  // "NAME (tensors[t]): rank 3: ..." for several).
  std::string why_not;
  // The whole work per run: the slowest rank's min and median, and the
  // local steps' share of the median.
  double seconds_min = 0;
  double seconds_median = 0;
  double local_seconds_median = 0;
  int64_t peak_bytes = 0;          // the largest measured
  int64_t memory_bound_bytes = 0;  // the largest rank's
  double wall_seconds = 0;
};

// Aggregates the reports of every rank of a run of `work`. Meant for runs
// where every rank ran (RankFailure OK); a report without a row's timings
// counts as 0 for that row.
RunSummary Summarize(const Mesh& mesh, const BatchWork& work,
                     std::vector<RankReport> reports);

// Row r's timings over `reports` (the slowest rank's min, median and
// per-execution median; algbw from `row.bytes`), for summaries of other
// kinds of work (cross_work.h).
void FillRowTimings(size_t r, const std::vector<RankReport>& reports,
                    SummaryRow& row);
// The whole work's times, peak and memory bound: the slowest rank's.
void FillRunTotals(const std::vector<RankReport>& reports, RunSummary& s);

// OK when every rank ran; otherwise the first failing rank's code, with
// every failing rank's message listed ("the run failed; rank 3: ...").
absl::Status RankFailure(const std::vector<RankReport>& reports);

}  // namespace reshard::executor

#endif  // RESHARD_RUN_VALUES_RUN_SUMMARY_H_
