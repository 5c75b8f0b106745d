#include "proto/coordinator_convert.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/echoed_text.h"
#include "common/error_kind.h"
#include "planner/core/field_error.h"
#include "planner/cost/plan_memory.h"
#include "proto/batch_convert.h"
#include "proto/convert.h"

namespace reshard::proto {
namespace {

// google.rpc.Code's largest value (UNAUTHENTICATED).
constexpr int kLastStatusCode = 16;

void TimingToProto(double min, double median, v1::StepTiming* out) {
  out->set_seconds_min(min);
  out->set_seconds_median(median);
}

void RowToProto(const executor::SummaryRow& row, v1::StepResult* out) {
  out->set_op(row.op);
  out->set_group(row.group);
  out->set_members(row.members);
  out->set_bytes(row.bytes);
  out->set_seconds_min(row.seconds_min);
  out->set_seconds_median(row.seconds_median);
  out->set_slowest_median_seconds(row.slowest_median_seconds);
  out->set_algbw_gbps(row.algbw_gbps);
  out->set_busbw_gbps(row.busbw_gbps);
  out->set_model_seconds(row.model_seconds);
}

void TensorRowToProto(const executor::TensorRow& row, v1::TensorResult* out) {
  out->set_name(row.name);
  out->mutable_checksums()->Assign(row.checksums.begin(), row.checksums.end());
  out->set_validated(row.validated);
  out->set_validation_error(row.why_not);
  out->set_conservation(row.conservation);
  out->set_conservation_source(row.conservation_source);
  out->set_conservation_result(row.conservation_result);
}

}  // namespace

Backend BackendFromProto(v1::Backend backend) {
  return backend == v1::BACKEND_NCCL ? Backend::kNccl : Backend::kGloo;
}

v1::Backend BackendToProto(Backend backend) {
  switch (backend) {
    case Backend::kNccl:
      return v1::BACKEND_NCCL;
    case Backend::kGloo:
      break;
  }
  return v1::BACKEND_GLOO;
}

absl::Status StatusFromCode(int code, const std::string& message) {
  if (code == 0) return absl::OkStatus();
  if (code < 0 || code > kLastStatusCode) {
    return absl::UnknownError(message);
  }
  return absl::Status(static_cast<absl::StatusCode>(code), message);
}

void BatchWorkToProto(const Mesh& mesh, const executor::BatchWork& work,
                      v1::BatchWork* out) {
  BatchPlan batch;
  for (const Plan& plan : work.plans) batch.plans.push_back(plan);
  batch.schedule = work.schedule;
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
    work.names.push_back(absl::StrCat("item ", work.plans.size()));
    work.plans.push_back(*std::move(plan));
  }
  work.schedule = std::move(batch->schedule);
  work.bucketed = proto.bucketed();
  absl::Status s =
      CheckBucketSchedule(mesh, work.PlanPointers(), work.schedule);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("batch.", s.message()));
  }
  // Derived here, as for a plan run alone (BatchWork::OfPlan), never taken
  // from the sender: an agent bounds its memory by it.
  work.schedule.peak_bytes =
      BatchPeakBytes(mesh, work.PlanPointers(), work.schedule);
  return work;
}

void RunWorkToProto(const Mesh& mesh, const executor::BatchWork& work,
                    v1::RunWork* out) {
  if (work.single_plan) {
    PlanToProto(mesh, work.plans.front(), out->mutable_plan());
  } else {
    BatchWorkToProto(mesh, work, out->mutable_batch());
  }
}

absl::StatusOr<executor::BatchWork> RunWorkFromProto(const Mesh& mesh,
                                                     const v1::RunWork& run) {
  switch (run.work_case()) {
    case v1::RunWork::kPlan: {
      absl::StatusOr<Plan> plan = PlanFromProto(mesh, run.plan());
      if (!plan.ok()) return InvalidField("run.plan", plan.status().message());
      return executor::BatchWork::OfPlan(mesh, *std::move(plan));
    }
    case v1::RunWork::kBatch: {
      absl::StatusOr<executor::BatchWork> work =
          BatchWorkFromProto(mesh, run.batch());
      if (work.ok()) return work;
      return absl::Status(work.status().code(),
                          absl::StrCat("run.", work.status().message()));
    }
    default:
      return InvalidField("run.work", "neither a plan nor a batch");
  }
}

void RanToProto(const Mesh& mesh, const executor::BatchWork& work,
                v1::RunJobResponse* out) {
  if (work.single_plan) {
    PlanToProto(mesh, work.plans.front(), out->mutable_plan());
  } else {
    out->mutable_batch()->set_bucketed(work.bucketed);
  }
}

absl::StatusOr<executor::BatchWork> RanFromProto(
    const Mesh& mesh, const v1::RunJobResponse& proto,
    const executor::BatchWork* given) {
  if (proto.has_plan()) {
    absl::StatusOr<Plan> plan = PlanFromProto(mesh, proto.plan());
    if (!plan.ok()) return plan.status();
    return executor::BatchWork::OfPlan(mesh, *std::move(plan));
  }
  if (proto.has_batch() && given != nullptr) return *given;
  return absl::InternalError(
      "RunJob answered without saying what ran (an older server?)");
}

void RankReportToProto(const executor::RankReport& report, v1::RankReport* out,
                       ExecutionSeconds executions) {
  out->set_rank(report.rank);
  out->set_code(static_cast<int>(report.status.code()));
  // Cut as every error is (common/echoed_text.h): a report stays within
  // the Coordinator's bounds on its fields.
  out->set_error(BoundedMessage(report.status.message()));
  out->set_error_kind(report.status.ok() ? ""
                                         : std::string(ErrorKindName(
                                               ErrorKindOf(report.status))));
  const size_t rows =
      std::max(report.seconds_min.size(), report.seconds_median.size());
  out->clear_steps();
  for (size_t k = 0; k < rows; ++k) {
    v1::StepTiming* step = out->add_steps();
    TimingToProto(
        k < report.seconds_min.size() ? report.seconds_min[k] : 0,
        k < report.seconds_median.size() ? report.seconds_median[k] : 0, step);
    if (executions == ExecutionSeconds::kInclude && k < report.seconds.size()) {
      step->mutable_seconds()->Assign(report.seconds[k].begin(),
                                      report.seconds[k].end());
    }
  }
  out->set_peak_bytes(report.peak_bytes);
  out->set_executions_done(report.executions_done);
  out->set_memory_bound_bytes(report.memory_bound_bytes);
  TimingToProto(report.total_seconds_min, report.total_seconds_median,
                out->mutable_total());
  out->set_local_seconds_median(report.local_seconds_median);
  out->clear_tensors();
  for (const executor::TensorCheck& t : report.tensors) {
    v1::TensorCheck* check = out->add_tensors();
    check->set_checksum(t.checksum);
    check->set_validated(t.validated);
    check->set_validation_error(BoundedMessage(t.validation_error));
    check->set_conservation(t.conservation);
    check->set_conservation_source(t.conservation_source);
    check->set_conservation_result(t.conservation_result);
  }
}

executor::RankReport RankReportFromProto(const v1::RankReport& proto) {
  executor::RankReport report;
  report.rank = proto.rank();
  report.status = StatusFromCode(proto.code(), proto.error());
  // Marked only where the code alone would say another kind.
  if (std::optional<ErrorKind> kind = ErrorKindNamed(proto.error_kind());
      kind.has_value() && !report.status.ok() &&
      *kind != ErrorKindOf(report.status)) {
    report.status = MarkErrorKind(std::move(report.status), *kind);
  }
  for (const v1::StepTiming& step : proto.steps()) {
    report.seconds_min.push_back(step.seconds_min());
    report.seconds_median.push_back(step.seconds_median());
    report.seconds.emplace_back(step.seconds().begin(), step.seconds().end());
  }
  report.peak_bytes = proto.peak_bytes();
  report.executions_done = proto.executions_done();
  report.memory_bound_bytes = proto.memory_bound_bytes();
  report.total_seconds_min = proto.total().seconds_min();
  report.total_seconds_median = proto.total().seconds_median();
  report.local_seconds_median = proto.local_seconds_median();
  for (const v1::TensorCheck& t : proto.tensors()) {
    report.tensors.push_back({t.checksum(),
                              t.validated(),
                              t.validation_error(),
                              {},
                              t.conservation(),
                              t.conservation_source(),
                              t.conservation_result()});
  }
  return report;
}

void RunSummaryToProto(const executor::RunSummary& summary,
                       v1::RunJobResponse* out) {
  out->clear_steps();
  for (const executor::SummaryRow& row : summary.rows) {
    RowToProto(row, out->add_steps());
  }
  out->clear_tensors();
  for (const executor::TensorRow& row : summary.tensors) {
    TensorRowToProto(row, out->add_tensors());
  }
  out->set_validated(summary.validated);
  out->set_validation_error(summary.why_not);
  out->set_peak_bytes(summary.peak_bytes);
  out->set_memory_bound_bytes(summary.memory_bound_bytes);
  out->set_wall_seconds(summary.wall_seconds);
  out->set_seconds_min(summary.seconds_min);
  out->set_seconds_median(summary.seconds_median);
  out->set_local_seconds_median(summary.local_seconds_median);
}

executor::RunSummary RunSummaryFromProto(const v1::RunJobResponse& proto) {
  executor::RunSummary summary;
  for (const v1::StepResult& r : proto.steps()) {
    summary.rows.push_back({r.op(), r.group(), r.members(), r.bytes(),
                            r.seconds_min(), r.seconds_median(),
                            r.slowest_median_seconds(), r.algbw_gbps(),
                            r.busbw_gbps(), r.model_seconds()});
  }
  for (const v1::TensorResult& t : proto.tensors()) {
    summary.tensors.push_back({t.name(),
                               {t.checksums().begin(), t.checksums().end()},
                               t.validated(),
                               t.validation_error(),
                               t.conservation(),
                               t.conservation_source(),
                               t.conservation_result()});
  }
  summary.validated = proto.validated();
  summary.why_not = proto.validation_error();
  summary.peak_bytes = proto.peak_bytes();
  summary.memory_bound_bytes = proto.memory_bound_bytes();
  summary.wall_seconds = proto.wall_seconds();
  summary.seconds_min = proto.seconds_min();
  summary.seconds_median = proto.seconds_median();
  summary.local_seconds_median = proto.local_seconds_median();
  return summary;
}

}  // namespace reshard::proto
