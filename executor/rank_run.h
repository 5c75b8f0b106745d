// One rank's whole run of a plan, as reshardctl exec and the agents do it
// (DESIGN §6.2, §6.3): build the source data of the data rule, compile,
// run `warmup` + `iters` times timing every step, then reduce the result's
// Partial dims (the validation collective, not timed), validate it against
// g and compute its checksum. Validation never calls a planner or the
// simulator.
#ifndef RESHARD_EXECUTOR_RANK_RUN_H_
#define RESHARD_EXECUTOR_RANK_RUN_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/communicator_provider.h"
#include "planner/mesh.h"
#include "planner/plan.h"

namespace reshard::executor {

struct RankOptions {
  int iters = 1;
  int warmup = 0;
  bool keep_result = false;  // return the result tensor (tests)
  // Asked before each execution: true stops the run with CANCELLED (an
  // agent whose run was cancelled, or whose Coordinator went away). Null:
  // never stops.
  std::function<bool()> stopped;
};

// How many times a run executes its plan: warmup, then at least one timed
// iteration.
inline int TotalExecutions(int warmup, int iters) {
  return warmup + std::max(1, iters);
}
inline int TotalExecutions(const RankOptions& options) {
  return TotalExecutions(options.warmup, options.iters);
}

// CANCELLED ("stopped after `done` of `total` executions") once `stopped`
// (when set) says so; asked before each execution of a run.
absl::Status CheckStopped(const std::function<bool()>& stopped, int done,
                          int total);

struct RankReport {
  int64_t rank = 0;
  absl::Status status;  // the run's failure, if any (validation excluded)
  std::vector<double> seconds_min;     // per step, over the timed runs
  std::vector<double> seconds_median;  // per step
  uint64_t checksum = 0;
  bool validated = false;
  std::string validation_error;  // why not validated
  int64_t peak_bytes = 0;        // measured by the runner
  int64_t memory_bound_bytes = 0;
  std::vector<char> result;  // with keep_result: the tensor before reduction
};

RankReport RunRank(const Mesh& mesh, const Plan& plan, int64_t rank,
                   CommunicatorProvider& provider, const RankOptions& options);

// What a rank's result of one tensor amounts to (DESIGN §6.2): the
// validation collective (the Partial dims of `plan.dst` reduced in place on
// `result`, not timed), the comparison with g and the checksum. Also run
// per tensor of a batch. `status` is the collective's failure, if any.
struct ResultCheck {
  absl::Status status;
  uint64_t checksum = 0;
  bool validated = false;
  std::string validation_error;  // why not validated
};
ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result);

// A report as bytes (for a pipe between processes) and back.
std::string SerializeReport(const RankReport& report);
absl::StatusOr<RankReport> ParseReport(const std::string& bytes);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RANK_RUN_H_
