#include "proto/coordinator_convert.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"

namespace reshard {
namespace {

// google.rpc.Code's largest value (UNAUTHENTICATED).
constexpr int kLastStatusCode = 16;

}  // namespace

absl::Status StatusFromCode(int code, const std::string& message) {
  if (code == 0) return absl::OkStatus();
  if (code < 0 || code > kLastStatusCode) {
    return absl::UnknownError(message);
  }
  return absl::Status(static_cast<absl::StatusCode>(code), message);
}

void RankReportToProto(const executor::RankReport& report,
                       v1::RankReport* out) {
  out->set_rank(report.rank);
  out->set_code(static_cast<int>(report.status.code()));
  out->set_error(std::string(report.status.message()));
  const size_t steps =
      std::max(report.seconds_min.size(), report.seconds_median.size());
  out->clear_steps();
  for (size_t k = 0; k < steps; ++k) {
    v1::StepTiming* step = out->add_steps();
    if (k < report.seconds_min.size()) {
      step->set_seconds_min(report.seconds_min[k]);
    }
    if (k < report.seconds_median.size()) {
      step->set_seconds_median(report.seconds_median[k]);
    }
  }
  out->set_checksum(report.checksum);
  out->set_validated(report.validated);
  out->set_validation_error(report.validation_error);
  out->set_peak_bytes(report.peak_bytes);
  out->set_memory_bound_bytes(report.memory_bound_bytes);
}

executor::RankReport RankReportFromProto(const v1::RankReport& proto) {
  executor::RankReport report;
  report.rank = proto.rank();
  report.status = StatusFromCode(proto.code(), proto.error());
  for (const v1::StepTiming& step : proto.steps()) {
    report.seconds_min.push_back(step.seconds_min());
    report.seconds_median.push_back(step.seconds_median());
  }
  report.checksum = proto.checksum();
  report.validated = proto.validated();
  report.validation_error = proto.validation_error();
  report.peak_bytes = proto.peak_bytes();
  report.memory_bound_bytes = proto.memory_bound_bytes();
  return report;
}

void RunSummaryToProto(const executor::RunSummary& summary,
                       v1::RunJobResponse* out) {
  out->clear_steps();
  for (const executor::StepRow& row : summary.steps) {
    v1::StepResult* step = out->add_steps();
    step->set_op(row.op);
    step->set_group(row.group);
    step->set_bytes(row.bytes);
    step->set_seconds_min(row.seconds_min);
    step->set_seconds_median(row.seconds_median);
    step->set_algbw_gbps(row.algbw_gbps);
    step->set_busbw_gbps(row.busbw_gbps);
  }
  out->mutable_checksums()->Assign(summary.checksums.begin(),
                                   summary.checksums.end());
  out->set_validated(summary.validated);
  out->set_validation_error(summary.why_not);
  out->set_peak_bytes(summary.peak_bytes);
  out->set_wall_seconds(summary.wall_seconds);
}

executor::RunSummary RunSummaryFromProto(const v1::RunJobResponse& proto) {
  executor::RunSummary summary;
  for (const v1::StepResult& step : proto.steps()) {
    summary.steps.push_back({step.op(), step.group(), step.bytes(),
                             step.seconds_min(), step.seconds_median(),
                             step.algbw_gbps(), step.busbw_gbps()});
  }
  summary.checksums.assign(proto.checksums().begin(), proto.checksums().end());
  summary.validated = proto.validated();
  summary.why_not = proto.validation_error();
  summary.peak_bytes = proto.peak_bytes();
  summary.wall_seconds = proto.wall_seconds();
  return summary;
}

}  // namespace reshard
