// What a run of a plan on every rank amounts to (DESIGN §6.3): one row per
// step with the slowest rank's times, every rank's checksum, the verdict
// and the largest measured peak. `reshardctl exec` and the Coordinator both
// aggregate their ranks' RankReports here, so a run reports the same numbers
// whichever way it was launched.
#ifndef RESHARD_EXECUTOR_RUN_SUMMARY_H_
#define RESHARD_EXECUTOR_RUN_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "executor/rank_run.h"
#include "planner/mesh.h"
#include "planner/plan.h"

namespace reshard::executor {

// One step's row: bytes of the padded buffer (DESIGN §3.3), the slowest
// rank's min and median seconds, algbw = bytes / median and busbw = algbw x
// the nccl-tests factor, in GB/s (10^9 bytes/s).
struct StepRow {
  std::string op;
  std::string group;
  int64_t bytes = 0;
  double seconds_min = 0;     // slowest rank's
  double seconds_median = 0;  // slowest rank's
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

// A whole run: rows in step order, checksums by global rank ascending.
// `wall_seconds` is the launcher's to fill (Summarize leaves it 0).
struct RunSummary {
  std::vector<StepRow> steps;
  std::vector<uint64_t> checksums;  // by global rank, ascending
  bool validated = true;
  std::string why_not;  // the first rank (ascending) that did not validate
  int64_t peak_bytes = 0;
  double wall_seconds = 0;
};

// Aggregates the reports of every rank of a run of `plan` on `mesh`. Meant
// for runs where every rank ran (RankFailure OK); a report without a step's
// timings counts as 0 for that step.
RunSummary Summarize(const Mesh& mesh, const Plan& plan,
                     std::vector<RankReport> reports);

// OK when every rank ran; otherwise the first failing rank's code, with
// every failing rank's message listed ("the run failed; rank 3: ...").
absl::Status RankFailure(const std::vector<RankReport>& reports);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_SUMMARY_H_
