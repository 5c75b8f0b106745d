// What a run of a batch on every rank amounts to (DESIGN §8, §6.3): one row
// per bucket (tensor by tensor: per communicating step) with the slowest
// rank's times, the whole batch's time per run, every tensor's checksums by
// rank and verdict. `reshardctl exec --batch` aggregates its ranks'
// BatchRankReports here, as run_summary.h does for one plan.
#ifndef RESHARD_EXECUTOR_BATCH_SUMMARY_H_
#define RESHARD_EXECUTOR_BATCH_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "executor/batch_rank_run.h"
#include "planner/bucket_schedule.h"
#include "planner/mesh.h"

namespace reshard::executor {

// One bucket's row: its bytes (the larger packed buffer, DESIGN §3.3's
// bytes summed over the members), the slowest rank's min and median
// seconds, algbw = bytes / median and busbw = algbw × the nccl-tests
// factor, in GB/s (10^9 bytes/s).
struct BucketRow {
  std::string op;
  std::string group;
  int64_t members = 0;
  int64_t bytes = 0;
  double seconds_min = 0;
  double seconds_median = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

struct TensorRow {
  std::string name;
  std::vector<uint64_t> checksums;  // by global rank, ascending
  bool validated = true;
  std::string why_not;  // the first rank (ascending) that did not validate
};

struct BatchSummary {
  std::vector<BucketRow> buckets;
  std::vector<TensorRow> tensors;
  bool validated = true;
  std::string why_not;  // the first tensor that did not validate
  // The whole batch per run: the slowest rank's min and median.
  double seconds_min = 0;
  double seconds_median = 0;
  // Bucketed runs: the local steps' share of the median (slowest rank).
  double local_seconds_median = 0;
  int64_t memory_bound_bytes = 0;  // the largest rank's
  double wall_seconds = 0;         // the launcher's to fill
};

// Aggregates the reports of every rank of a run whose rows are `rows` (the
// schedule run, or UnbucketedSchedule tensor by tensor); `names` label the
// tensors. Meant for runs where every rank ran (BatchRankFailure OK).
BatchSummary SummarizeBatch(const Mesh& mesh, const BucketSchedule& rows,
                            const std::vector<std::string>& names,
                            std::vector<BatchRankReport> reports);

// OK when every rank ran; otherwise the first failing rank's code, with
// every failing rank's message listed ("the run failed; rank 3: ...").
absl::Status BatchRankFailure(const std::vector<BatchRankReport>& reports);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BATCH_SUMMARY_H_
