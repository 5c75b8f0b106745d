// What one rank says about a run: its failure if any, per-row and total
// timings, peak and bound memory, and each tensor's verdict. A value type
// (with its pipe codec) apart from the runner, so that what carries or
// aggregates reports (the Coordinator, the wire, the client) does not link
// the executor.
#ifndef RESHARD_RUN_VALUES_RANK_REPORT_H_
#define RESHARD_RUN_VALUES_RANK_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace reshard::executor {

// A tensor's verdict on one rank.
struct TensorCheck {
  uint64_t checksum = 0;
  bool validated = false;
  std::string validation_error;  // why not validated
  std::vector<char> result;  // with keep_result: the tensor before reduction
  // A run on the caller's tensors (docs/DESIGN.md §6.5): "exact" or
  // "skipped", and the whole tensor's conservation checksum before and
  // after; empty on generated data.
  std::string conservation;
  uint64_t conservation_source = 0;
  uint64_t conservation_result = 0;
};

// How many timed executions a report carries per row: enough for a
// median, bounded so a long run's report stays small.
inline constexpr size_t kReportedExecutions = 100;

struct RankReport {
  int64_t rank = 0;
  absl::Status status;  // the run's failure, if any (validation excluded)
  std::vector<double> seconds_min;     // per row (BatchWork::Rows)
  std::vector<double> seconds_median;  // per row
  // Per row, each timed execution's seconds, in order (the first
  // kReportedExecutions): what the summary's slowest-rank median needs.
  std::vector<std::vector<double>> seconds;
  double total_seconds_min = 0;  // the whole work per run
  double total_seconds_median = 0;
  double local_seconds_median = 0;  // the local steps' share
  int64_t peak_bytes = 0;           // measured: the most one step held
  // Bounds peak_bytes and the runner's own buffers.
  int64_t memory_bound_bytes = 0;
  // Executions finished, warmup included: all of them unless the run was
  // stopped or failed part way, when the timings are of those it finished.
  int executions_done = 0;
  std::vector<TensorCheck> tensors;  // by item

  // Why the rank's result did not validate ("tensors[t]: ..." when the
  // work has several); nullopt when every tensor validated.
  std::optional<std::string> WhyNotValidated() const;
};

// A report as bytes (for a pipe between processes) and back; DATA_LOSS
// when the bytes are not a report.
std::string SerializeReport(const RankReport& report);
absl::StatusOr<RankReport> ParseReport(const std::string& bytes);

}  // namespace reshard::executor

#endif  // RESHARD_RUN_VALUES_RANK_REPORT_H_
