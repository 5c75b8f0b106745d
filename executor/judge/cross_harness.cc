#include "executor/judge/cross_harness.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "executor/judge/conservation_check.h"
#include "executor/judge/conservation_checksum.h"
#include "executor/judge/data_rule.h"
#include "executor/memory/host_memory_space.h"

namespace reshard::executor {
namespace {

// Runs `runner` warmup + iters times, the rows timed after the warmup.
absl::Status TimedCrossRuns(CrossRunner& runner,
                            absl::Span<const void* const> in,
                            absl::Span<void* const> out, const RunOptions& run,
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
    s = runner.RunBatch(in, out, &stats);
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

// Tensor t's result on this destination rank, judged and reported.
void JudgeResult(const CrossRunner& runner, int t,
                 CommunicatorProvider& provider, const HarnessOptions& harness,
                 std::vector<char>& out, RankReport& report) {
  const CrossMeshPlan& plan = runner.plan(t);
  std::vector<char> result;
  if (harness.keep_result) result = out;  // before the validation collective
  const Mesh& src_mesh = runner.src_mesh(t);
  const int64_t partial_ranks =
      src_mesh.GroupSize(PartialOf(src_mesh, plan.src).dims);
  Plan judged;
  judged.tensor = plan.tensor;
  judged.src = plan.dst_mid;
  judged.dst = plan.dst;
  ResultCheck check =
      CheckResult(runner.dst_mesh(), judged, runner.dst_position(t), provider,
                  out, partial_ranks);
  if (!check.status.ok()) {
    const std::string tensor =
        runner.size() > 1 ? absl::StrCat("tensors[", t, "]: ") : "";
    report.status = absl::Status(
        check.status.code(),
        absl::StrCat(tensor, "validation: ", check.status.message()));
    return;
  }
  check.check.result = std::move(result);
  report.tensors.push_back(std::move(check.check));
}

// Runs the compiled `runner` on generated data: every source block filled
// by the data rule, warmup + iters timed runs, then every destination
// block judged as a plan on the destination mesh that ends in its `dst`
// would be (its source's Partial dims reduced by the validation
// collective): one tensor in the report per destination tensor, in order.
void JudgeGenerated(CrossRunner& runner, CommunicatorProvider& provider,
                    const RunOptions& run, const HarnessOptions& harness,
                    RankReport& report) {
  const int n = runner.size();
  std::vector<std::vector<char>> in(n), out(n);
  std::vector<const void*> ins(n, nullptr);
  std::vector<void*> outs(n, nullptr);
  report.peak_bytes = runner.StagingBytes();
  for (int t = 0; t < n; ++t) {
    const CrossMeshPlan& plan = runner.plan(t);
    const int64_t itemsize = plan.tensor.itemsize();
    in[t].resize(static_cast<size_t>(runner.SourceNumel(t) * itemsize));
    out[t].resize(static_cast<size_t>(runner.ResultNumel(t) * itemsize));
    if (runner.is_source(t)) {
      FillSource(runner.src_mesh(t), plan.tensor, plan.src,
                 runner.src_position(t), in[t].data());
      ins[t] = in[t].data();
    }
    if (runner.is_destination(t)) outs[t] = out[t].data();
    report.peak_bytes += static_cast<int64_t>(in[t].size() + out[t].size());
  }
  report.memory_bound_bytes = report.peak_bytes;
  report.status = TimedCrossRuns(runner, ins, outs, run, harness, report);
  for (int t = 0; t < n && report.status.ok(); ++t) {
    if (runner.is_destination(t)) {
      JudgeResult(runner, t, provider, harness, out[t], report);
    }
  }
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
  const void* const in[] = {source};
  void* const out[] = {result};
  report.status = TimedCrossRuns(**runner, in, out, run, once, report);
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
  JudgeGenerated(**compiled, provider, run, harness, report);
  return report;
}

RankReport RunCrossBatchGenerated(std::vector<CrossWork> items,
                                  int64_t exchange_bytes, int64_t rank,
                                  CommunicatorProvider& provider,
                                  const RunOptions& run,
                                  const HarnessOptions& harness) {
  RankReport report;
  report.rank = rank;
  absl::StatusOr<std::unique_ptr<CrossRunner>> runner =
      CrossRunner::CompileBatch(std::move(items), exchange_bytes, rank,
                                provider);
  if (!runner.ok()) {
    report.status = runner.status();
    return report;
  }
  JudgeGenerated(**runner, provider, run, harness, report);
  return report;
}

}  // namespace reshard::executor
