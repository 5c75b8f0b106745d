// SerializeReport and ParseReport (executor/judge/harness.h) in
// report_codec.h's form.
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "run_values/rank_report.h"
#include "run_values/report_codec.h"

namespace reshard::executor {
namespace {

constexpr char kMagic[] = "reshard-rank-report-3";

void AppendTensor(std::string& out, const TensorCheck& t) {
  absl::StrAppend(&out, t.checksum, "\n", t.validated ? 1 : 0, "\n");
  AppendBlob(out, t.validation_error);
  AppendBlob(out, absl::string_view(t.result.data(), t.result.size()));
}

bool ReadTensor(ReportReader& in, TensorCheck& t) {
  int validated = 0;
  std::string result;
  if (!in.Number(t.checksum) || !in.Number(validated) ||
      !in.Blob(t.validation_error) || !in.Blob(result)) {
    return false;
  }
  t.validated = validated == 1;
  t.result.assign(result.begin(), result.end());
  return true;
}

}  // namespace

std::string SerializeReport(const RankReport& r) {
  std::string out = absl::StrCat(kMagic, "\n", r.rank, "\n",
                                 static_cast<int>(r.status.code()), "\n");
  AppendBlob(out, r.status.message());
  absl::StrAppend(&out, r.peak_bytes, "\n", r.memory_bound_bytes, "\n",
                  r.executions_done, "\n");
  for (double v :
       {r.total_seconds_min, r.total_seconds_median, r.local_seconds_median}) {
    AppendDouble(out, v);
  }
  absl::StrAppend(&out, r.seconds_min.size(), "\n");
  for (size_t k = 0; k < r.seconds_min.size(); ++k) {
    AppendDouble(out, r.seconds_min[k]);
    AppendDouble(out, r.seconds_median[k]);
    const absl::Span<const double> each =
        k < r.seconds.size() ? absl::MakeConstSpan(r.seconds[k])
                             : absl::Span<const double>();
    absl::StrAppend(&out, each.size(), "\n");
    for (double v : each) AppendDouble(out, v);
  }
  absl::StrAppend(&out, r.tensors.size(), "\n");
  for (const TensorCheck& t : r.tensors) AppendTensor(out, t);
  return out;
}

absl::StatusOr<RankReport> ParseReport(const std::string& bytes) {
  ReportReader in(bytes);
  RankReport r;
  std::string magic, message;
  int code = 0;
  size_t rows = 0, tensors = 0;
  bool ok = in.Line(magic) && magic == kMagic && in.Number(r.rank) &&
            in.Number(code) && in.Blob(message) && in.Number(r.peak_bytes) &&
            in.Number(r.memory_bound_bytes) && in.Number(r.executions_done) &&
            in.Number(r.total_seconds_min) &&
            in.Number(r.total_seconds_median) &&
            in.Number(r.local_seconds_median) && in.Number(rows);
  for (size_t k = 0; ok && k < rows; ++k) {
    double lo = 0, mid = 0;
    size_t executions = 0;
    ok = in.Number(lo) && in.Number(mid) && in.Number(executions) &&
         executions <= kReportedExecutions;
    r.seconds_min.push_back(lo);
    r.seconds_median.push_back(mid);
    std::vector<double>& each = r.seconds.emplace_back();
    for (size_t e = 0; ok && e < executions; ++e) {
      ok = in.Number(each.emplace_back());
    }
  }
  ok = ok && in.Number(tensors);
  for (size_t t = 0; ok && t < tensors; ++t) {
    ok = ReadTensor(in, r.tensors.emplace_back());
  }
  if (!ok) return absl::DataLossError("rank report: malformed");
  r.status = absl::Status(static_cast<absl::StatusCode>(code), message);
  return r;
}

}  // namespace reshard::executor
