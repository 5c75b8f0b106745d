#include "executor/judge/cross_harness.h"

#include <algorithm>
#include <limits>
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

// This rank's conservation shares of every tensor's source and result,
// added over every rank of the run: one verdict per tensor (§6.5), in
// order.
absl::StatusOr<std::vector<TensorCheck>> CrossConservation(
    const CrossRunner& runner, CommunicatorProvider& provider,
    const RunBuffers& tensors) {
  const int n = runner.size();
  std::vector<int64_t> mine(2 * n, 0);
  for (int t = 0; t < n; ++t) {
    const CrossMeshPlan& plan = runner.plan(t);
    if (runner.is_source(t)) {
      mine[2 * t] = static_cast<int64_t>(
          ConservationShare(runner.src_mesh(t), plan.tensor, plan.src,
                            runner.src_position(t), tensors.sources[t]));
    }
    if (runner.is_destination(t)) {
      mine[2 * t + 1] = static_cast<int64_t>(
          ConservationShare(runner.dst_mesh(), plan.tensor, plan.dst,
                            runner.dst_position(t), tensors.results[t]));
    }
  }
  const std::vector<int64_t>& ranks = runner.run_ranks();
  absl::StatusOr<Communicator*> world = provider.Get(ranks, "cross");
  if (!world.ok()) return world.status();
  std::vector<int64_t> all(mine.size() * ranks.size());
  absl::Status s =
      (*world)->AllGather(mine.data(), all.data(), mine.size(), DType::kInt64);
  if (s.ok()) s = provider.Drain();
  if (!s.ok()) return s;
  std::vector<TensorCheck> checks;
  for (int t = 0; t < n; ++t) {
    uint64_t before = 0, after = 0;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const int64_t* shares = &all[i * mine.size() + 2 * t];
      before = AddShares(before, static_cast<uint64_t>(shares[0]));
      after = AddShares(after, static_cast<uint64_t>(shares[1]));
    }
    const CrossMeshPlan& plan = runner.plan(t);
    checks.push_back(
        ConservationVerdict(plan.tensor, plan.src, plan.dst, before, after));
  }
  return checks;
}

// The runner of `items` for `rank`: the one `kept` holds, else compiled
// (and left in `kept` when given).
absl::StatusOr<CrossRunner*> RunnerOf(absl::Span<const CrossWork> items,
                                      int64_t exchange_bytes, int64_t rank,
                                      CommunicatorProvider& provider,
                                      std::unique_ptr<CrossRunner>* kept,
                                      std::unique_ptr<CrossRunner>& own) {
  std::unique_ptr<CrossRunner>& slot = kept != nullptr ? *kept : own;
  if (slot != nullptr) return slot.get();
  absl::StatusOr<std::unique_ptr<CrossRunner>> runner =
      CrossRunner::CompileBatch({items.begin(), items.end()}, exchange_bytes,
                                rank, provider);
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

RankReport RunCrossOnTensors(const CrossRunWork& what, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run, const RunBuffers& tensors,
                             Preflight& preflight,
                             std::unique_ptr<CrossRunner>* kept) {
  RankReport report;
  report.rank = rank;
  absl::StatusOr<Mesh> world = CrossBatchRanksMesh(what.items);
  if (!world.ok()) {
    report.status = world.status();
    return report;
  }
  HostMemorySpace host;
  const char* noun = what.batch ? "cross-mesh batch" : "cross-mesh plan";
  report.status =
      RunPreflight(*world, what.digest, noun, rank, provider, host, preflight);
  if (!report.status.ok()) return report;
  std::unique_ptr<CrossRunner> own;
  absl::StatusOr<CrossRunner*> runner =
      RunnerOf(what.items, what.exchange_bytes, rank, provider, kept, own);
  if (!runner.ok()) {
    report.status = runner.status();
    return report;
  }
  report.peak_bytes = (*runner)->StagingBytes();
  report.memory_bound_bytes = report.peak_bytes;
  HarnessOptions once;
  report.status = TimedCrossRuns(**runner, tensors.sources, tensors.results,
                                 run, once, report);
  if (!report.status.ok()) return report;
  absl::StatusOr<std::vector<TensorCheck>> checks =
      CrossConservation(**runner, provider, tensors);
  if (!checks.ok()) {
    report.status = absl::Status(
        checks.status().code(),
        absl::StrCat("conservation checksum: ", checks.status().message()));
    return report;
  }
  for (int t = 0; t < (*runner)->size(); ++t) {
    if ((*runner)->is_destination(t)) {
      report.tensors.push_back(std::move((*checks)[t]));
    }
  }
  return report;
}

RankReport RunCrossGenerated(const CrossWork& work, int64_t rank,
                             CommunicatorProvider& provider,
                             const RunOptions& run,
                             const HarnessOptions& harness,
                             std::unique_ptr<CrossRunner>* kept) {
  return RunCrossBatchGenerated({&work, 1}, std::numeric_limits<int64_t>::max(),
                                rank, provider, run, harness, kept);
}

RankReport RunCrossBatchGenerated(absl::Span<const CrossWork> items,
                                  int64_t exchange_bytes, int64_t rank,
                                  CommunicatorProvider& provider,
                                  const RunOptions& run,
                                  const HarnessOptions& harness,
                                  std::unique_ptr<CrossRunner>* kept) {
  RankReport report;
  report.rank = rank;
  std::unique_ptr<CrossRunner> own;
  absl::StatusOr<CrossRunner*> runner =
      RunnerOf(items, exchange_bytes, rank, provider, kept, own);
  if (!runner.ok()) {
    report.status = runner.status();
    return report;
  }
  JudgeGenerated(**runner, provider, run, harness, report);
  return report;
}

}  // namespace reshard::executor
