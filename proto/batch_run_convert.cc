#include "proto/batch_run_convert.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/field_error.h"
#include "proto/batch_convert.h"
#include "proto/coordinator_convert.h"

namespace reshard {
namespace {

executor::BatchRankReport BatchReportFromProto(const v1::RankReport& proto) {
  executor::BatchRankReport report;
  report.rank = proto.rank();
  report.status = StatusFromCode(proto.code(), proto.error());
  for (const v1::StepTiming& step : proto.steps()) {
    report.seconds_min.push_back(step.seconds_min());
    report.seconds_median.push_back(step.seconds_median());
  }
  const v1::BatchRankResult& batch = proto.batch();
  report.total_seconds_min = batch.total().seconds_min();
  report.total_seconds_median = batch.total().seconds_median();
  report.local_seconds_median = batch.local_seconds_median();
  report.memory_bound_bytes = proto.memory_bound_bytes();
  for (const v1::TensorCheck& t : batch.tensors()) {
    report.tensors.push_back(
        {t.checksum(), t.validated(), t.validation_error()});
  }
  return report;
}

void BatchReportToProto(const executor::BatchRankReport& report,
                        v1::RankReport* out) {
  out->set_rank(report.rank);
  out->set_code(static_cast<int>(report.status.code()));
  out->set_error(std::string(report.status.message()));
  const size_t rows =
      std::min(report.seconds_min.size(), report.seconds_median.size());
  for (size_t k = 0; k < rows; ++k) {
    v1::StepTiming* step = out->add_steps();
    step->set_seconds_min(report.seconds_min[k]);
    step->set_seconds_median(report.seconds_median[k]);
  }
  out->set_memory_bound_bytes(report.memory_bound_bytes);
  const std::optional<std::string> why_not = executor::WhyNotValidated(report);
  out->set_validated(report.status.ok() && !why_not.has_value());
  out->set_validation_error(why_not.value_or(""));
  v1::BatchRankResult* batch = out->mutable_batch();
  batch->mutable_total()->set_seconds_min(report.total_seconds_min);
  batch->mutable_total()->set_seconds_median(report.total_seconds_median);
  batch->set_local_seconds_median(report.local_seconds_median);
  for (const executor::TensorCheck& t : report.tensors) {
    v1::TensorCheck* check = batch->add_tensors();
    check->set_checksum(t.checksum);
    check->set_validated(t.validated);
    check->set_validation_error(t.validation_error);
  }
}

}  // namespace

void BatchWorkToProto(const Mesh& mesh, const executor::BatchWork& work,
                      v1::BatchWork* out) {
  BatchPlan batch;
  for (const Plan& plan : work.plans) batch.plans.push_back(plan);
  batch.schedule = work.rows;
  BatchPlanToProto(mesh, batch, "", out->mutable_batch());
  out->set_bucketed(work.bucketed);
}

absl::StatusOr<executor::BatchWork> BatchWorkFromProto(
    const Mesh& mesh, const v1::BatchWork& proto) {
  if (proto.batch().plans_size() == 0) {
    return InvalidField("batch.plans", "a batch needs at least one item");
  }
  if (proto.batch().errors_size() > 0) {
    return InvalidField("batch.errors",
                        absl::StrCat("item ", proto.batch().errors(0).item(),
                                     " has no plan (a batch runs whole): ",
                                     proto.batch().errors(0).message()));
  }
  absl::StatusOr<BatchPlan> batch =
      BatchPlanFromProto(mesh, proto.batch(), proto.batch().plans_size());
  if (!batch.ok()) {
    return absl::Status(batch.status().code(),
                        absl::StrCat("batch.", batch.status().message()));
  }
  executor::BatchWork work;
  for (absl::StatusOr<Plan>& plan : batch->plans) {
    work.plans.push_back(*std::move(plan));
  }
  work.rows = std::move(batch->schedule);
  work.bucketed = proto.bucketed();
  absl::Status s = CheckBucketSchedule(mesh, work.PlanPointers(), work.rows);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("batch.", s.message()));
  }
  return work;
}

void RankResultToProto(const executor::RankResult& result,
                       v1::RankReport* out) {
  if (const auto* plan = std::get_if<executor::RankReport>(&result)) {
    RankReportToProto(*plan, out);
  } else {
    BatchReportToProto(std::get<executor::BatchRankReport>(result), out);
  }
}

executor::RankResult RankResultFromProto(const v1::RankReport& proto) {
  if (proto.has_batch()) return BatchReportFromProto(proto);
  return RankReportFromProto(proto);
}

void BatchSummaryToProto(const executor::BatchSummary& summary, bool bucketed,
                         v1::RunJobResponse* out) {
  v1::BatchRunResult* batch = out->mutable_batch();
  batch->set_bucketed(bucketed);
  for (const executor::BucketRow& row : summary.buckets) {
    v1::BucketResult* r = batch->add_rows();
    r->set_op(row.op);
    r->set_group(row.group);
    r->set_members(row.members);
    r->set_bytes(row.bytes);
    r->set_seconds_min(row.seconds_min);
    r->set_seconds_median(row.seconds_median);
    r->set_algbw_gbps(row.algbw_gbps);
    r->set_busbw_gbps(row.busbw_gbps);
  }
  for (const executor::TensorRow& row : summary.tensors) {
    v1::TensorResult* t = batch->add_tensors();
    t->set_name(row.name);
    t->mutable_checksums()->Assign(row.checksums.begin(), row.checksums.end());
    t->set_validated(row.validated);
    t->set_validation_error(row.why_not);
  }
  batch->set_seconds_min(summary.seconds_min);
  batch->set_seconds_median(summary.seconds_median);
  batch->set_local_seconds_median(summary.local_seconds_median);
  batch->set_memory_bound_bytes(summary.memory_bound_bytes);
  out->set_validated(summary.validated);
  out->set_validation_error(summary.why_not);
  out->set_peak_bytes(summary.memory_bound_bytes);
  out->set_wall_seconds(summary.wall_seconds);
}

executor::BatchSummary BatchSummaryFromProto(const v1::RunJobResponse& proto) {
  executor::BatchSummary summary;
  const v1::BatchRunResult& batch = proto.batch();
  for (const v1::BucketResult& r : batch.rows()) {
    summary.buckets.push_back({r.op(), r.group(), r.members(), r.bytes(),
                               r.seconds_min(), r.seconds_median(),
                               r.algbw_gbps(), r.busbw_gbps()});
  }
  for (const v1::TensorResult& t : batch.tensors()) {
    summary.tensors.push_back({t.name(),
                               {t.checksums().begin(), t.checksums().end()},
                               t.validated(),
                               t.validation_error()});
  }
  summary.validated = proto.validated();
  summary.why_not = proto.validation_error();
  summary.seconds_min = batch.seconds_min();
  summary.seconds_median = batch.seconds_median();
  summary.local_seconds_median = batch.local_seconds_median();
  summary.memory_bound_bytes = batch.memory_bound_bytes();
  summary.wall_seconds = proto.wall_seconds();
  return summary;
}

}  // namespace reshard
