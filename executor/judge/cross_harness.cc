#include "executor/judge/cross_harness.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/judge/conservation_check.h"
#include "executor/judge/conservation_checksum.h"
#include "executor/judge/data_rule.h"
#include "executor/memory/host_memory_space.h"

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

// This rank's conservation shares of the sources and the results, added
// over every rank of the run: one tensor's verdict (§6.5).
absl::StatusOr<TensorCheck> CrossConservation(const CrossWork& work,
                                              const CrossRunner& runner,
                                              CommunicatorProvider& provider,
                                              const void* source,
                                              const void* result) {
  const CrossMeshPlan& plan = work.plan;
  int64_t mine[2] = {0, 0};
  if (runner.is_source()) {
    mine[0] = static_cast<int64_t>(ConservationShare(
        work.src_mesh, plan.tensor, plan.src, runner.src_position(), source));
  }
  if (runner.is_destination()) {
    mine[1] = static_cast<int64_t>(ConservationShare(
        work.dst_mesh, plan.tensor, plan.dst, runner.dst_position(), result));
  }
  const std::vector<int64_t> ranks = work.Ranks();
  absl::StatusOr<Communicator*> world = provider.Get(ranks, "cross");
  if (!world.ok()) return world.status();
  std::vector<int64_t> all(2 * ranks.size());
  absl::Status s = (*world)->AllGather(mine, all.data(), 2, DType::kInt64);
  if (s.ok()) s = provider.Drain();
  if (!s.ok()) return s;
  uint64_t before = 0, after = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    before = AddShares(before, static_cast<uint64_t>(all[2 * i]));
    after = AddShares(after, static_cast<uint64_t>(all[2 * i + 1]));
  }
  return ConservationVerdict(plan.tensor, plan.src, plan.dst, before, after);
}

// The runner of `work` for `rank`: the one `kept` holds, else compiled
// (and left in `kept` when given).
absl::StatusOr<CrossRunner*> RunnerOf(const CrossWork& work, int64_t rank,
                                      CommunicatorProvider& provider,
                                      std::unique_ptr<CrossRunner>* kept,
                                      std::unique_ptr<CrossRunner>& own) {
  std::unique_ptr<CrossRunner>& slot = kept != nullptr ? *kept : own;
  if (slot != nullptr) return slot.get();
  absl::StatusOr<std::unique_ptr<CrossRunner>> runner = CrossRunner::Compile(
      work.src_mesh, work.dst_mesh, work.plan, rank, provider);
  if (!runner.ok()) return runner.status();
  slot = *std::move(runner);
  return slot.get();
}

}  // namespace

RankReport RunCrossOnTensors(const CrossWork& work, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run, const void* source,
                             void* result, Preflight& preflight,
                             std::unique_ptr<CrossRunner>* kept) {
  RankReport report;
  report.rank = rank;
  absl::StatusOr<Mesh> ranks = work.RanksMesh();
  if (!ranks.ok()) {
    report.status = ranks.status();
    return report;
  }
  HostMemorySpace host;
  report.status = RunPreflight(*ranks, work.Digest(), "cross-mesh plan", rank,
                               provider, host, preflight);
  if (!report.status.ok()) return report;
  std::unique_ptr<CrossRunner> own;
  absl::StatusOr<CrossRunner*> runner =
      RunnerOf(work, rank, provider, kept, own);
  if (!runner.ok()) {
    report.status = runner.status();
    return report;
  }
  report.peak_bytes = (*runner)->StagingBytes();
  report.memory_bound_bytes = report.peak_bytes;
  HarnessOptions once;
  report.status = TimedCrossRuns(**runner, source, result, run, once, report);
  if (!report.status.ok()) return report;
  absl::StatusOr<TensorCheck> check =
      CrossConservation(work, **runner, provider, source, result);
  if (!check.ok()) {
    report.status = absl::Status(
        check.status().code(),
        absl::StrCat("conservation checksum: ", check.status().message()));
  } else if ((*runner)->is_destination()) {
    report.tensors.push_back(*std::move(check));
  }
  return report;
}

RankReport RunCrossGenerated(const CrossWork& work, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run,
                             const HarnessOptions& harness,
                             std::unique_ptr<CrossRunner>* kept) {
  RankReport report;
  report.rank = rank;
  std::unique_ptr<CrossRunner> own;
  absl::StatusOr<CrossRunner*> compiled =
      RunnerOf(work, rank, provider, kept, own);
  if (!compiled.ok()) {
    report.status = compiled.status();
    return report;
  }
  CrossRunner& runner = **compiled;
  const Mesh& src_mesh = work.src_mesh;
  const Mesh& dst_mesh = work.dst_mesh;
  const CrossMeshPlan& plan = work.plan;
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
  std::vector<char> result;
  if (harness.keep_result) result = out;  // before the validation collective
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
  check.check.result = std::move(result);
  report.tensors.push_back(std::move(check.check));
  return report;
}

}  // namespace reshard::executor
