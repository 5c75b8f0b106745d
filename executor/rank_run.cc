#include "executor/rank_run.h"

#include <algorithm>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/data_rule.h"
#include "executor/plan_runner.h"
#include "executor/report_codec.h"
#include "executor/sample_stats.h"
#include "planner/local_layout.h"

namespace reshard::executor {
namespace {

// Runs warmup + iters times; fills the per-step timings.
absl::Status TimedRuns(PlanRunner& runner, const std::vector<char>& in,
                       std::vector<char>& out, const RankOptions& options,
                       RankReport& report) {
  const size_t steps = runner.plan().steps.size();
  std::vector<std::vector<double>> samples(steps);
  RunStats stats;
  for (int i = 0; i < TotalExecutions(options); ++i) {
    absl::Status stop =
        CheckStopped(options.stopped, i, TotalExecutions(options));
    if (!stop.ok()) return stop;
    absl::Status s = runner.Run(in.data(), out.data(), &stats);
    if (!s.ok()) return s;
    report.peak_bytes = std::max(report.peak_bytes, stats.peak_bytes);
    if (i < options.warmup) continue;
    for (size_t k = 0; k < steps; ++k) {
      samples[k].push_back(stats.step_seconds[k]);
    }
  }
  for (size_t k = 0; k < steps; ++k) {
    report.seconds_min.push_back(Minimum(samples[k]));
    report.seconds_median.push_back(Median(samples[k]));
  }
  return absl::OkStatus();
}

// The validation collective: `dst`'s Partial dims reduced, in place.
absl::Status ReducePartials(const Mesh& mesh, const Plan& plan,
                            int64_t position, CommunicatorProvider& provider,
                            std::vector<char>& data) {
  const PartialReduction partial = PartialOf(mesh, plan.dst);
  if (mesh.GroupSize(partial.dims) == 1) return absl::OkStatus();
  absl::StatusOr<Communicator*> comm = provider.Get(
      mesh.GroupRanks(position, partial.dims), mesh.GroupName(partial.dims));
  if (!comm.ok()) return comm.status();
  const int64_t numel =
      static_cast<int64_t>(data.size()) / plan.tensor.itemsize();
  return (*comm)->AllReduce(data.data(), numel, plan.tensor.dtype(),
                            {partial.op, partial.avg_divisor});
}

}  // namespace

ResultCheck CheckResult(const Mesh& mesh, const Plan& plan, int64_t position,
                        CommunicatorProvider& provider,
                        std::vector<char>& result) {
  ResultCheck check;
  check.status = ReducePartials(mesh, plan, position, provider, result);
  if (!check.status.ok()) return check;
  const PartialReduction source = PartialOf(mesh, plan.src);
  const absl::Status valid =
      ValidateResult(mesh, plan.tensor, plan.dst, position,
                     mesh.GroupSize(source.dims), result.data());
  check.validated = valid.ok();
  check.validation_error = std::string(valid.message());
  check.checksum =
      Checksum(plan.tensor.dtype(), result.data(),
               static_cast<int64_t>(result.size()) / plan.tensor.itemsize());
  return check;
}

absl::Status CheckStopped(const std::function<bool()>& stopped, int done,
                          int total) {
  if (!stopped || !stopped()) return absl::OkStatus();
  return absl::CancelledError(
      absl::StrCat("stopped after ", done, " of ", total, " executions"));
}

RankReport RunRank(const Mesh& mesh, const Plan& plan, int64_t rank,
                   CommunicatorProvider& provider, const RankOptions& options) {
  RankReport report;
  report.rank = rank;
  absl::StatusOr<std::unique_ptr<PlanRunner>> runner =
      PlanRunner::Compile(mesh, plan, rank, provider);
  if (!runner.ok()) {
    report.status = runner.status();
    return report;
  }
  PlanRunner& r = **runner;
  report.memory_bound_bytes = r.MemoryBoundBytes();
  const int64_t itemsize = plan.tensor.itemsize();
  std::vector<char> in(r.SourceNumel() * itemsize);
  std::vector<char> out(r.ResultNumel() * itemsize);
  FillSource(mesh, plan.tensor, plan.src, r.position(), in.data());
  report.status = TimedRuns(r, in, out, options, report);
  if (!report.status.ok()) return report;
  if (options.keep_result) report.result = out;
  ResultCheck check = CheckResult(mesh, plan, r.position(), provider, out);
  report.status = check.status;
  report.validated = check.validated;
  report.validation_error = std::move(check.validation_error);
  report.checksum = check.checksum;
  return report;
}

std::string SerializeReport(const RankReport& r) {
  std::string out = absl::StrCat("reshard-rank-report-1\n", r.rank, "\n",
                                 static_cast<int>(r.status.code()), "\n");
  AppendBlob(out, r.status.message());
  absl::StrAppend(&out, r.checksum, "\n", r.validated ? 1 : 0, "\n");
  AppendBlob(out, r.validation_error);
  absl::StrAppend(&out, r.peak_bytes, "\n", r.memory_bound_bytes, "\n",
                  r.seconds_min.size(), "\n");
  for (size_t k = 0; k < r.seconds_min.size(); ++k) {
    AppendDouble(out, r.seconds_min[k]);
    AppendDouble(out, r.seconds_median[k]);
  }
  AppendBlob(out, absl::string_view(r.result.data(), r.result.size()));
  return out;
}

absl::StatusOr<RankReport> ParseReport(const std::string& bytes) {
  ReportReader in(bytes);
  RankReport r;
  std::string magic, message, result;
  int code = 0, validated = 0;
  size_t steps = 0;
  const bool ok = in.Line(magic) && magic == "reshard-rank-report-1" &&
                  in.Number(r.rank) && in.Number(code) && in.Blob(message) &&
                  in.Number(r.checksum) && in.Number(validated) &&
                  in.Blob(r.validation_error) && in.Number(r.peak_bytes) &&
                  in.Number(r.memory_bound_bytes) && in.Number(steps);
  if (!ok) return absl::DataLossError("rank report: malformed header");
  for (size_t k = 0; k < steps; ++k) {
    double lo = 0, mid = 0;
    if (!in.Number(lo) || !in.Number(mid)) {
      return absl::DataLossError("rank report: malformed step timings");
    }
    r.seconds_min.push_back(lo);
    r.seconds_median.push_back(mid);
  }
  if (!in.Blob(result)) return absl::DataLossError("rank report: no result");
  r.result.assign(result.begin(), result.end());
  r.status = absl::Status(static_cast<absl::StatusCode>(code), message);
  r.validated = validated == 1;
  return r;
}

}  // namespace reshard::executor
