// One rank's whole run of a batch (DESIGN §8, §6.2, §6.3), as `reshardctl
// exec --batch` does it: every tensor's source data by the data rule, the
// batch compiled, `warmup` + `iters` timed runs, then per tensor the
// validation collective, the comparison with g and the checksum.
//
// Bucketed, the batch runs as its schedule's buckets (BatchRunner) and each
// row of the report is a bucket. Tensor by tensor (`bucketed` false), each
// tensor runs its own plan with a PlanRunner, one after the other, and the
// rows are the rows of UnbucketedSchedule: one per communicating step, in
// tensor order. Both time the whole batch per run, so the two modes compare
// in the same terms.
#ifndef RESHARD_EXECUTOR_BATCH_RANK_RUN_H_
#define RESHARD_EXECUTOR_BATCH_RANK_RUN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/communicator_provider.h"
#include "planner/bucket_schedule.h"
#include "planner/mesh.h"
#include "planner/plan.h"

namespace reshard::executor {

struct BatchRankOptions {
  int iters = 1;
  int warmup = 0;
  bool bucketed = true;
  // Asked before each run of the batch, as RankOptions::stopped (an agent's
  // cancelled run). Null: never stops.
  std::function<bool()> stopped;
};

// A tensor's verdict on one rank.
struct TensorCheck {
  uint64_t checksum = 0;
  bool validated = false;
  std::string validation_error;
};

struct BatchRankReport {
  int64_t rank = 0;
  absl::Status status;  // the run's failure, if any (validation excluded)
  std::vector<double> seconds_min;     // per row, over the timed runs
  std::vector<double> seconds_median;  // per row
  double total_seconds_min = 0;        // the whole batch per run
  double total_seconds_median = 0;
  double local_seconds_median = 0;  // bucketed: the local steps' share
  int64_t memory_bound_bytes = 0;   // the runners' own buffers, at most
  std::vector<TensorCheck> tensors;
};

// Runs `plans` on this rank: by `schedule` when options.bucketed, else
// tensor by tensor (the report's rows then follow UnbucketedSchedule).
BatchRankReport RunBatchRank(const Mesh& mesh, const std::vector<Plan>& plans,
                             const BucketSchedule& schedule, int64_t rank,
                             CommunicatorProvider& provider,
                             const BatchRankOptions& options);

// A report as bytes (for a pipe between processes) and back; DATA_LOSS
// when the bytes are not a report.
std::string SerializeBatchReport(const BatchRankReport& report);
absl::StatusOr<BatchRankReport> ParseBatchReport(const std::string& bytes);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BATCH_RANK_RUN_H_
