#include "executor/run_summary.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/collective_factors.h"
#include "planner/cost_model.h"
#include "planner/step.h"

namespace reshard::executor {
namespace {

StepRow RowOf(const Mesh& mesh, const Plan& plan, const CostModel& model,
              size_t k, const std::vector<RankReport>& reports) {
  const Step& step = plan.steps[k];
  StepRow row;
  row.op = std::string(StepOpName(step.op));
  row.group = mesh.GroupName(step.group);
  row.bytes = model.Price(step.from, step.transition()).bytes;
  for (const RankReport& r : reports) {
    if (k < r.seconds_min.size()) {
      row.seconds_min = std::max(row.seconds_min, r.seconds_min[k]);
    }
    if (k < r.seconds_median.size()) {
      row.seconds_median = std::max(row.seconds_median, r.seconds_median[k]);
    }
  }
  if (row.seconds_median > 0) {
    row.algbw_gbps = static_cast<double>(row.bytes) / row.seconds_median / 1e9;
    row.busbw_gbps = row.algbw_gbps *
                     BusBandwidthFactor(step.op, mesh.GroupSize(step.group));
  }
  return row;
}

}  // namespace

RunSummary Summarize(const Mesh& mesh, const Plan& plan,
                     std::vector<RankReport> reports) {
  RunSummary s;
  // Bytes per DESIGN §3.3 whatever model priced the plan: alpha_beta's.
  const CostModel model(mesh, plan.tensor, CostOptions());
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    s.steps.push_back(RowOf(mesh, plan, model, k, reports));
  }
  std::sort(
      reports.begin(), reports.end(),
      [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
  for (const RankReport& r : reports) {
    s.checksums.push_back(r.checksum);
    s.peak_bytes = std::max(s.peak_bytes, r.peak_bytes);
    if (!r.validated && s.validated) {
      s.validated = false;
      s.why_not = absl::StrCat("rank ", r.rank, ": ", r.validation_error);
    }
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
