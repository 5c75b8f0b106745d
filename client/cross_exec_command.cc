#include "client/cross_exec_command.h"

#include <algorithm>
#include <chrono>
#include <memory>
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

// The run's ranks, ascending: they must be 0..N−1 with N = --local.
absl::Status CheckRanks(const CrossMeshes& meshes, int local) {
  const std::vector<int64_t> ranks =
      executor::CrossRanks(meshes.src, meshes.dst);
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

// A bound on the whole run: every collective and exchange round group is
// bounded by the timeout.
std::chrono::milliseconds Deadline(const CrossMeshPlan& plan,
                                   const CrossExecFlags& flags) {
  const int64_t per_run =
      static_cast<int64_t>(plan.pre.steps.size() + plan.post.steps.size()) +
      flags.ranks / executor::kTransferRoundsInFlight + 4;
  const int64_t calls = per_run * (flags.run.iters + flags.run.warmup + 1);
  return std::chrono::seconds(flags.run.timeout_seconds * (calls + 2) + 10);
}

RankReport RunRank(const CrossMeshes& meshes, const CrossMeshPlan& plan,
                   int rank, std::shared_ptr<executor::KeyValueStore> store,
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
  return executor::RunCrossGenerated({meshes.src, meshes.dst, plan}, rank,
                                     *provider, run, harness);
}

}  // namespace

absl::Status RunCrossExec(const std::optional<ServerFlags>& server,
                          const CliArgs& args, const CrossExecFlags& flags,
                          std::ostream& out) {
  if (args.Has("batch")) {
    return absl::UnimplementedError(
        "exec --src_mesh --batch: cross-mesh batches do not run yet; run "
        "each tensor's plan with exec");
  }
  absl::StatusOr<CrossMeshes> meshes = CrossMeshesFromFlags(args);
  if (!meshes.ok()) return meshes.status();
  if (absl::Status s = CheckRanks(*meshes, flags.ranks); !s.ok()) return s;
  absl::StatusOr<CrossMeshPlan> plan = CrossPlanFromFlags(
      server.has_value() ? &*server : nullptr, args, *meshes);
  if (!plan.ok()) return plan.status();
  InstallInterruptHandler();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<RankReport>> reports = RunLocalRanks(
      flags.ranks, flags.threads, Deadline(*plan, flags),
      AfterLoss(flags.run.timeout_seconds), [](int i) { return int64_t{i}; },
      [&](int i, std::shared_ptr<executor::KeyValueStore> store) {
        return RunRank(*meshes, *plan, i, std::move(store), flags);
      });
  if (!reports.ok()) return reports.status();
  if (Interrupted()) {
    return MarkInterrupted(absl::CancelledError("exec: interrupted"));
  }
  if (absl::Status failure = executor::RankFailure(*reports); !failure.ok()) {
    return failure;
  }
  const executor::CrossWork work{meshes->src, meshes->dst, *std::move(plan)};
  executor::RunSummary summary = executor::SummarizeCross(work, *reports);
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  PrintCrossRun({work, "gloo",
                 absl::StrCat(flags.ranks, " ranks (",
                              flags.threads ? "threads" : "processes", ")"),
                 flags.run.iters, flags.run.warmup, *reports, summary},
                flags.run.json, out);
  return CrossRunVerdict(summary);
}

}  // namespace reshard::client
