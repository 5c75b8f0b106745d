#include "run_values/run_summary.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/cost/collective_factors.h"
#include "run_values/sample_stats.h"

namespace reshard::executor {
namespace {

// Row r's median over executions of the slowest rank's seconds, over the
// executions every report carries (a rank stopped part way has fewer). 0
// without any.
double SlowestMedian(size_t r, const std::vector<RankReport>& reports) {
  size_t executions = reports.empty() ? 0 : kReportedExecutions;
  for (const RankReport& report : reports) {
    if (r >= report.seconds.size()) return 0;
    executions = std::min(executions, report.seconds[r].size());
  }
  if (executions == 0) return 0;
  std::vector<double> slowest(executions, 0);
  for (const RankReport& report : reports) {
    for (size_t e = 0; e < executions; ++e) {
      slowest[e] = std::max(slowest[e], report.seconds[r][e]);
    }
  }
  return Median(slowest);
}

SummaryRow RowOf(const Mesh& mesh, const RunRow& spec, size_t r,
                 const std::vector<RankReport>& reports) {
  SummaryRow row;
  row.op = std::string(StepOpName(spec.op));
  row.group = mesh.GroupName(spec.group);
  row.members = spec.members;
  row.bytes = spec.bytes;
  row.model_seconds = spec.model_seconds;
  FillRowTimings(r, reports, row);
  if (row.seconds_median > 0) {
    row.busbw_gbps = row.algbw_gbps *
                     BusBandwidthFactor(spec.op, mesh.GroupSize(spec.group));
  }
  return row;
}

// Tensor t's checksums by rank and verdict; `reports` sorted by rank.
TensorRow TensorOf(const std::string& name, size_t t,
                   const std::vector<RankReport>& reports) {
  TensorRow row;
  row.name = name;
  for (const RankReport& r : reports) {
    const bool known = t < r.tensors.size();
    const TensorCheck check = known ? r.tensors[t] : TensorCheck();
    row.checksums.push_back(check.checksum);
    if (row.conservation.empty() && !check.conservation.empty()) {
      row.conservation = check.conservation;
      row.conservation_source = check.conservation_source;
      row.conservation_result = check.conservation_result;
    }
    if (!check.validated && row.validated) {
      row.validated = false;
      row.why_not = absl::StrCat("rank ", r.rank, ": ",
                                 known ? check.validation_error : "no verdict");
    }
  }
  return row;
}

}  // namespace

void FillRowTimings(size_t r, const std::vector<RankReport>& reports,
                    SummaryRow& row) {
  for (const RankReport& report : reports) {
    if (r < report.seconds_min.size()) {
      row.seconds_min = std::max(row.seconds_min, report.seconds_min[r]);
    }
    if (r < report.seconds_median.size()) {
      row.seconds_median =
          std::max(row.seconds_median, report.seconds_median[r]);
    }
  }
  row.slowest_median_seconds = SlowestMedian(r, reports);
  if (row.seconds_median > 0) {
    row.algbw_gbps = static_cast<double>(row.bytes) / row.seconds_median / 1e9;
  }
}

void FillRunTotals(const std::vector<RankReport>& reports, RunSummary& s) {
  for (const RankReport& r : reports) {
    s.seconds_min = std::max(s.seconds_min, r.total_seconds_min);
    s.seconds_median = std::max(s.seconds_median, r.total_seconds_median);
    s.local_seconds_median =
        std::max(s.local_seconds_median, r.local_seconds_median);
    s.peak_bytes = std::max(s.peak_bytes, r.peak_bytes);
    s.memory_bound_bytes = std::max(s.memory_bound_bytes, r.memory_bound_bytes);
  }
}

RunSummary Summarize(const Mesh& mesh, const BatchWork& work,
                     std::vector<RankReport> reports) {
  RunSummary s;
  const std::vector<RunRow> rows = work.Rows(mesh);
  for (size_t r = 0; r < rows.size(); ++r) {
    s.rows.push_back(RowOf(mesh, rows[r], r, reports));
  }
  std::sort(
      reports.begin(), reports.end(),
      [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
  FillRunTotals(reports, s);
  const size_t items = work.plans.size();
  for (size_t t = 0; t < items; ++t) {
    const std::string name = t < work.names.size() ? work.names[t] : "";
    s.tensors.push_back(TensorOf(name, t, reports));
    if (s.tensors.back().validated || !s.validated) continue;
    s.validated = false;
    s.why_not = items == 1 ? s.tensors.back().why_not
                           : absl::StrCat(name, " (tensors[", t,
                                          "]): ", s.tensors.back().why_not);
  }
  return s;
}

absl::Status RankFailure(const std::vector<RankReport>& reports) {
  std::vector<std::string> failures;
  absl::StatusCode code = absl::StatusCode::kOk;
  for (const RankReport& r : reports) {
    if (r.status.ok()) continue;
    if (code == absl::StatusCode::kOk) code = r.status.code();
    failures.push_back(absl::StrCat("rank ", r.rank, ": ", r.status.message()));
  }
  if (failures.empty()) return absl::OkStatus();
  return absl::Status(
      code, absl::StrCat("the run failed; ", absl::StrJoin(failures, "; ")));
}

}  // namespace reshard::executor
