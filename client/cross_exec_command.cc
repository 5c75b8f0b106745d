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
#include "client/exit_codes.h"
#include "client/interrupt.h"
#include "client/local_ranks.h"
#include "common/json_text.h"
#include "executor/backends/provider_factory.h"
#include "executor/judge/cross_harness.h"
#include "planner/format/cross_plan_format.h"
#include "run_values/run_summary.h"

namespace reshard::client {
namespace {

using executor::RankReport;

constexpr const char* kRowNames[executor::kCrossRows] = {
    "pre_steps", "transfers", "post_steps"};

// The run's ranks, ascending: they must be 0..N−1 with N = --local.
absl::Status CheckRanks(const CrossMeshes& meshes, int local) {
  std::vector<int64_t> ranks;
  for (const Mesh* mesh : {&meshes.src, &meshes.dst}) {
    for (int64_t p = 0; p < mesh->world_size(); ++p) {
      ranks.push_back(mesh->RankAt(p));
    }
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
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
  return executor::RunCrossGenerated(meshes.src, meshes.dst, plan, rank,
                                     *provider, run, harness);
}

// The slowest rank's value of `field` for row `row` (-1: the whole run).
double Slowest(const std::vector<RankReport>& reports, int row, bool median) {
  double worst = 0;
  for (const RankReport& r : reports) {
    if (row < 0) {
      worst = std::max(worst,
                       median ? r.total_seconds_median : r.total_seconds_min);
    } else if (static_cast<size_t>(row) < r.seconds_median.size()) {
      worst =
          std::max(worst, median ? r.seconds_median[row] : r.seconds_min[row]);
    }
  }
  return worst;
}

// The first destination rank that did not validate, if any.
std::optional<std::string> NotValidated(
    const std::vector<RankReport>& reports) {
  for (const RankReport& r : reports) {
    if (std::optional<std::string> why = r.WhyNotValidated(); why) {
      return absl::StrCat("rank ", r.rank, ": ", *why);
    }
  }
  return std::nullopt;
}

std::string RanksJson(const CrossMeshes& meshes,
                      const std::vector<RankReport>& reports) {
  std::vector<std::string> ranks;
  for (const RankReport& r : reports) {
    const bool dst = meshes.dst.PositionOfRank(r.rank) >= 0;
    const bool has = dst && !r.tensors.empty();
    ranks.push_back(absl::StrCat(
        "{\"rank\": ", r.rank, ", \"source\": ",
        meshes.src.PositionOfRank(r.rank) >= 0 ? "true" : "false",
        ", \"destination\": ", dst ? "true" : "false", ", \"checksum\": ",
        has ? absl::StrCat(r.tensors.front().checksum) : "null",
        ", \"validated\": ",
        has ? (r.tensors.front().validated ? "true" : "false") : "null", "}"));
  }
  return absl::StrCat("[", absl::StrJoin(ranks, ", "), "]");
}

void PrintJson(const CrossMeshes& meshes, const CrossMeshPlan& plan,
               const CrossExecFlags& flags,
               const std::vector<RankReport>& reports, double wall,
               std::ostream& out) {
  std::vector<std::string> rows;
  for (int row = 0; row < executor::kCrossRows; ++row) {
    rows.push_back(absl::StrCat(
        "{\"name\": \"", kRowNames[row],
        "\", \"seconds_min\": ", FormatDouble(Slowest(reports, row, false)),
        ", \"seconds_median\": ", FormatDouble(Slowest(reports, row, true)),
        "}"));
  }
  int64_t staging = 0;
  for (const RankReport& r : reports) staging = std::max(staging, r.peak_bytes);
  out << "{\"kind\": \"cross_mesh\", \"plan\": "
      << CrossPlanJson(meshes.src, meshes.dst, plan)
      << ", \"backend\": \"gloo\", \"world_size\": " << flags.ranks
      << ", \"iters\": " << flags.run.iters
      << ", \"warmup\": " << flags.run.warmup << ", \"rows\": ["
      << absl::StrJoin(rows, ", ")
      << "], \"seconds_min\": " << FormatDouble(Slowest(reports, -1, false))
      << ", \"seconds_median\": " << FormatDouble(Slowest(reports, -1, true))
      << ", \"ranks\": " << RanksJson(meshes, reports)
      << ", \"validated\": " << (NotValidated(reports) ? "false" : "true")
      << ", \"staging_bytes_max\": " << staging
      << ", \"wall_seconds\": " << FormatDouble(wall) << "}\n";
}

void PrintTable(const CrossMeshes& meshes, const CrossExecFlags& flags,
                const std::vector<RankReport>& reports, std::ostream& out) {
  out << absl::StrFormat(
      "cross-mesh run: %d ranks (%s), gloo, %d iters after %d warm-up\n",
      flags.ranks, flags.threads ? "threads" : "processes", flags.run.iters,
      flags.run.warmup);
  out << absl::StrFormat("%-11s %12s %12s\n", "part", "min_us", "median_us");
  for (int row = -1; row < executor::kCrossRows; ++row) {
    out << absl::StrFormat(
        "%-11s %12.1f %12.1f\n", row < 0 ? "total" : kRowNames[row],
        Slowest(reports, row, false) * 1e6, Slowest(reports, row, true) * 1e6);
  }
  std::vector<std::string> sums;
  for (const RankReport& r : reports) {
    if (meshes.dst.PositionOfRank(r.rank) < 0 || r.tensors.empty()) continue;
    sums.push_back(absl::StrCat(r.rank, ":", r.tensors.front().checksum));
  }
  out << "checksums (destination ranks): " << absl::StrJoin(sums, " ") << "\n";
  const std::optional<std::string> why = NotValidated(reports);
  out << (why ? absl::StrCat("NOT VALIDATED: ", *why) : "validated") << "\n";
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
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (flags.run.json) {
    PrintJson(*meshes, *plan, flags, *reports, wall, out);
  } else {
    PrintTable(*meshes, flags, *reports, out);
  }
  if (std::optional<std::string> why = NotValidated(*reports); why) {
    return absl::DataLossError(absl::StrCat("not validated: ", *why));
  }
  return absl::OkStatus();
}

}  // namespace reshard::client
