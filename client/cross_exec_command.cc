#include "client/cross_exec_command.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cross_plan_command.h"
#include "client/cross_run_output.h"
#include "client/exit_codes.h"
#include "client/interrupt.h"
#include "client/local_ranks.h"
#include "common/json_text.h"
#include "executor/backends/provider_factory.h"
#include "executor/judge/cross_harness.h"
#include "planner/format/cross_plan_format.h"
#include "run_values/cross_work.h"
#include "run_values/run_summary.h"

namespace reshard::client {
namespace {

using executor::RankReport;

// The run's ranks (every work's), ascending: they must be 0..N−1 with
// N = --local.
absl::Status CheckRanks(const std::vector<executor::CrossWork>& works,
                        int local) {
  const std::vector<int64_t> ranks = executor::CrossBatchRanks(works);
  if (ranks.back() != static_cast<int64_t>(ranks.size()) - 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--src_ranks, --dst_ranks: a local run's ranks are 0..N-1, but the "
        "two rank maps hold ",
        ranks.size(), " ranks up to ", ranks.back()));
  }
  if (static_cast<int64_t>(ranks.size()) != local) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local: ", local,
                     " ranks given but the two meshes' "
                     "rank maps hold ",
                     ranks.size()));
  }
  return absl::OkStatus();
}

// A bound on the whole run: every collective, exchange round group and
// validation is bounded by the timeout.
std::chrono::milliseconds Deadline(
    const std::vector<executor::CrossWork>& works,
    const CrossExecFlags& flags) {
  int64_t per_run = 4;
  for (const executor::CrossWork& work : works) {
    per_run += static_cast<int64_t>(work.plan.pre.steps.size() +
                                    work.plan.post.steps.size()) +
               flags.ranks / executor::kTransferRoundsInFlight + 2;
  }
  const int64_t calls = per_run * (flags.run.iters + flags.run.warmup + 1);
  return std::chrono::seconds(flags.run.timeout_seconds * (calls + 2) + 10);
}

// Tensor by tensor from a plan, or the batch's in bounded exchanges.
RankReport RunRank(const std::vector<executor::CrossWork>& works,
                   std::optional<int64_t> exchange_bytes, int rank,
                   std::shared_ptr<executor::KeyValueStore> store,
                   const CrossExecFlags& flags) {
  executor::HarnessOptions harness;
  harness.iters = flags.run.iters;
  harness.warmup = flags.run.warmup;
  executor::RunOptions run;
  run.stopped = Interrupted;
  std::unique_ptr<executor::CommunicatorProvider> provider =
      executor::MakeProvider(Backend::kGloo,
                             {std::move(store), "exec-cross", rank, flags.ranks,
                              std::chrono::seconds(flags.run.timeout_seconds)});
  if (exchange_bytes.has_value()) {
    return executor::RunCrossBatchGenerated(works, *exchange_bytes, rank,
                                            *provider, run, harness);
  }
  return executor::RunCrossGenerated(works.front(), rank, *provider, run,
                                     harness);
}

// Every rank's report of `works` run on --local processes (or threads);
// the first failure of the launch, an interrupt or a rank.
absl::StatusOr<std::vector<RankReport>> RunWorks(
    const std::vector<executor::CrossWork>& works,
    std::optional<int64_t> exchange_bytes, const CrossExecFlags& flags) {
  if (absl::Status s = CheckRanks(works, flags.ranks); !s.ok()) return s;
  InstallInterruptHandler();
  absl::StatusOr<std::vector<RankReport>> reports = RunLocalRanks(
      flags.ranks, flags.threads, Deadline(works, flags),
      AfterLoss(flags.run.timeout_seconds), [](int i) { return int64_t{i}; },
      [&](int i, std::shared_ptr<executor::KeyValueStore> store) {
        return RunRank(works, exchange_bytes, i, std::move(store), flags);
      });
  if (!reports.ok()) return reports.status();
  if (Interrupted()) {
    return MarkInterrupted(absl::CancelledError("exec: interrupted"));
  }
  if (absl::Status failure = executor::RankFailure(*reports); !failure.ok()) {
    return failure;
  }
  return reports;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

absl::Status RunBatchExec(const CliArgs& args, const CrossMeshes& meshes,
                          const CrossExecFlags& flags, std::ostream& out) {
  absl::StatusOr<CrossBatch> batch = CrossBatchFromFlags(args, meshes);
  if (!batch.ok()) return batch.status();
  absl::StatusOr<std::vector<executor::CrossWork>> works =
      CrossBatchWorks(*batch);
  if (!works.ok()) return works.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<RankReport>> reports =
      RunWorks(*works, batch->bucket_bytes, flags);
  if (!reports.ok()) return reports.status();
  executor::RunSummary summary =
      executor::SummarizeCrossBatch(*works, *reports);
  summary.wall_seconds = SecondsSince(start);
  PrintCrossBatchRun(
      {&*batch, &*works, "gloo",
       absl::StrCat(flags.ranks, " ranks (",
                    flags.threads ? "threads" : "processes", ")"),
       flags.run.iters, flags.run.warmup, *reports, summary},
      flags.run.json, out);
  return CrossRunVerdict(summary);
}

}  // namespace

absl::Status RunCrossExec(const std::optional<ServerFlags>& server,
                          const CliArgs& args, const CrossExecFlags& flags,
                          std::ostream& out) {
  absl::StatusOr<CrossMeshes> meshes = CrossMeshesFromFlags(args);
  if (!meshes.ok()) return meshes.status();
  if (args.Has("batch")) return RunBatchExec(args, *meshes, flags, out);
  absl::StatusOr<CrossMeshPlan> plan = CrossPlanFromFlags(
      server.has_value() ? &*server : nullptr, args, *meshes);
  if (!plan.ok()) return plan.status();
  const std::vector<executor::CrossWork> works = {
      {meshes->src, meshes->dst, *std::move(plan)}};
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<RankReport>> reports =
      RunWorks(works, std::nullopt, flags);
  if (!reports.ok()) return reports.status();
  const executor::CrossWork& work = works.front();
  executor::RunSummary summary = executor::SummarizeCross(work, *reports);
  summary.wall_seconds = SecondsSince(start);
  PrintCrossRun({work, "gloo",
                 absl::StrCat(flags.ranks, " ranks (",
                              flags.threads ? "threads" : "processes", ")"),
                 flags.run.iters, flags.run.warmup, *reports, summary},
                flags.run.json, out);
  return CrossRunVerdict(summary);
}

}  // namespace reshard::client
