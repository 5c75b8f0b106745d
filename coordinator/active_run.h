// The run a job has in flight: who it went to, who reported, who was lost
// and whether it was cancelled. Internal to Job (its mutex guards it).
#ifndef RESHARD_COORDINATOR_ACTIVE_RUN_H_
#define RESHARD_COORDINATOR_ACTIVE_RUN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/work.h"
#include "run_values/rank_report.h"

namespace reshard::coordinator {

struct ActiveRun {
  std::string id;
  int64_t generation = 0;
  std::shared_ptr<const RunSpec> spec;
  bool plan_sent = true;  // a schedule's run: whether its plan went along
  absl::Time dispatched;
  absl::Time last_report;
  std::vector<std::optional<executor::RankReport>> reports;  // by rank
  std::vector<std::string> lost;  // by rank: why it left mid-run, or ""
  int64_t settled = 0;            // ranks that reported or were lost
  bool failed = false;            // a report with an error, or a lost rank
  bool cancelled = false;         // by CancelJob
  // By CancelJob's stop (a caller's Ctrl-C): the agents stop before their
  // next execution and report what they measured, which the run returns.
  bool stopping = false;
  std::vector<int> executions_done;  // by rank: Progress calls and reports
  int executions_total = 0;          // warmup + iters
  // Every rank ran and validated a run on registered tensors, and was
  // told to commit: by rank, its answer (a lost rank's: UNAVAILABLE).
  bool committing = false;
  std::vector<std::optional<absl::Status>> commits;

  bool Complete() const {
    return settled == static_cast<int64_t>(reports.size());
  }
  bool CommitsAnswered() const {
    for (const auto& commit : commits) {
      if (!commit.has_value()) return false;
    }
    return true;
  }
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_ACTIVE_RUN_H_
