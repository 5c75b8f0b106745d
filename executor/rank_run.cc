#include "executor/rank_run.h"

#include <algorithm>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/data_rule.h"
#include "executor/plan_runner.h"
#include "planner/local_layout.h"

namespace reshard::executor {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Runs warmup + iters times; fills the per-step timings.
absl::Status TimedRuns(PlanRunner& runner, const std::vector<char>& in,
                       std::vector<char>& out, const RankOptions& options,
                       RankReport& report) {
  const size_t steps = runner.plan().steps.size();
  std::vector<std::vector<double>> samples(steps);
  RunStats stats;
  for (int i = 0; i < options.warmup + std::max(1, options.iters); ++i) {
    absl::Status s = runner.Run(in.data(), out.data(), &stats);
    if (!s.ok()) return s;
    report.peak_bytes = std::max(report.peak_bytes, stats.peak_bytes);
    if (i < options.warmup) continue;
    for (size_t k = 0; k < steps; ++k) {
      samples[k].push_back(stats.step_seconds[k]);
    }
  }
  for (size_t k = 0; k < steps; ++k) {
    report.seconds_min.push_back(
        *std::min_element(samples[k].begin(), samples[k].end()));
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
  report.status = ReducePartials(mesh, plan, r.position(), provider, out);
  if (!report.status.ok()) return report;
  const PartialReduction source = PartialOf(mesh, plan.src);
  const absl::Status valid =
      ValidateResult(mesh, plan.tensor, plan.dst, r.position(),
                     mesh.GroupSize(source.dims), out.data());
  report.validated = valid.ok();
  report.validation_error = std::string(valid.message());
  report.checksum = Checksum(plan.tensor.dtype(), out.data(), r.ResultNumel());
  return report;
}

namespace {

// Length-prefixed, newline-separated fields: binary-safe and simple.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  bool Line(std::string& out) {
    const size_t end = bytes_.find('\n', at_);
    if (end == std::string::npos) return false;
    out = bytes_.substr(at_, end - at_);
    at_ = end + 1;
    return true;
  }
  template <typename T>
  bool Number(T& out) {
    std::string line;
    if (!Line(line)) return false;
    if constexpr (std::is_same_v<T, double>) {
      return absl::SimpleAtod(line, &out);
    } else {
      return absl::SimpleAtoi(line, &out);
    }
  }
  bool Blob(std::string& out) {
    size_t size = 0;
    if (!Number(size) || at_ + size > bytes_.size()) return false;
    out = bytes_.substr(at_, size);
    at_ += size;
    return true;
  }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

void AppendBlob(std::string& out, absl::string_view blob) {
  absl::StrAppend(&out, blob.size(), "\n", blob);
}

}  // namespace

std::string SerializeReport(const RankReport& r) {
  std::string out = absl::StrCat("reshard-rank-report-1\n", r.rank, "\n",
                                 static_cast<int>(r.status.code()), "\n");
  AppendBlob(out, r.status.message());
  absl::StrAppend(&out, r.checksum, "\n", r.validated ? 1 : 0, "\n");
  AppendBlob(out, r.validation_error);
  absl::StrAppend(&out, r.peak_bytes, "\n", r.memory_bound_bytes, "\n",
                  r.seconds_min.size(), "\n");
  for (size_t k = 0; k < r.seconds_min.size(); ++k) {
    absl::StrAppend(&out, absl::StrFormat("%.17g\n%.17g\n", r.seconds_min[k],
                                          r.seconds_median[k]));
  }
  AppendBlob(out, absl::string_view(r.result.data(), r.result.size()));
  return out;
}

absl::StatusOr<RankReport> ParseReport(const std::string& bytes) {
  Reader in(bytes);
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
