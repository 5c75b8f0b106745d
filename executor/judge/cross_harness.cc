#include "executor/judge/cross_harness.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/judge/data_rule.h"

namespace reshard::executor {
namespace {

// Runs `runner` warmup + iters times, the rows timed after the warmup.
absl::Status TimedCrossRuns(CrossRunner& runner, const void* in, void* out,
                            const RunOptions& run,
                            const HarnessOptions& harness, RankReport& report) {
  std::vector<std::vector<double>> rows(kCrossRows);
  std::vector<double> total;
  CrossRunStats stats;
  const int runs = TotalExecutions(harness);
  absl::Status s;
  for (int i = 0; i < runs && s.ok(); ++i) {
    if (run.stopped && run.stopped()) {
      s = absl::CancelledError(
          absl::StrCat("stopped after ", i, " executions"));
      break;
    }
    s = runner.Run(in, out, &stats);
    if (!s.ok()) break;
    report.executions_done = i + 1;
    if (run.progress) run.progress(i + 1);
    if (i < harness.warmup) continue;
    for (auto [row, seconds] :
         {std::pair{0, stats.pre_seconds}, std::pair{1, stats.transfer_seconds},
          std::pair{2, stats.post_seconds}}) {
      rows[row].push_back(seconds);
    }
    total.push_back(stats.total_seconds);
  }
  if (!total.empty()) SummarizeTimings(rows, total, report);
  return s;
}

}  // namespace

RankReport RunCrossGenerated(const Mesh& src_mesh, const Mesh& dst_mesh,
                             const CrossMeshPlan& plan, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run,
                             const HarnessOptions& harness) {
  RankReport report;
  report.rank = rank;
  absl::StatusOr<std::unique_ptr<CrossRunner>> compiled =
      CrossRunner::Compile(src_mesh, dst_mesh, plan, rank, provider);
  if (!compiled.ok()) {
    report.status = compiled.status();
    return report;
  }
  CrossRunner& runner = **compiled;
  const int64_t itemsize = plan.tensor.itemsize();
  std::vector<char> in(static_cast<size_t>(runner.SourceNumel() * itemsize));
  std::vector<char> out(static_cast<size_t>(runner.ResultNumel() * itemsize));
  if (runner.is_source()) {
    FillSource(src_mesh, plan.tensor, plan.src, runner.src_position(),
               in.data());
  }
  report.peak_bytes =
      runner.StagingBytes() + static_cast<int64_t>(in.size() + out.size());
  report.memory_bound_bytes = report.peak_bytes;
  report.status = TimedCrossRuns(
      runner, runner.is_source() ? in.data() : nullptr,
      runner.is_destination() ? out.data() : nullptr, run, harness, report);
  if (!report.status.ok() || !runner.is_destination()) return report;
  std::vector<char> kept;
  if (harness.keep_result) kept = out;  // before the validation collective
  const int64_t partial_ranks =
      src_mesh.GroupSize(PartialOf(src_mesh, plan.src).dims);
  // The result is judged as a plan on the destination mesh that ends in
  // `dst` would be.
  Plan judged;
  judged.tensor = plan.tensor;
  judged.src = plan.dst_mid;
  judged.dst = plan.dst;
  ResultCheck check = CheckResult(dst_mesh, judged, runner.dst_position(),
                                  provider, out, partial_ranks);
  if (!check.status.ok()) {
    report.status =
        absl::Status(check.status.code(),
                     absl::StrCat("validation: ", check.status.message()));
    return report;
  }
  check.check.result = std::move(kept);
  report.tensors.push_back(std::move(check.check));
  return report;
}

}  // namespace reshard::executor
