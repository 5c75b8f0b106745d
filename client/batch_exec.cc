#include "client/batch_exec.h"

#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/batch_command.h"
#include "client/batch_run_output.h"
#include "client/cli_args.h"
#include "client/plan_flags.h"
#include "executor/batch_rank_run.h"
#include "executor/batch_summary.h"
#include "executor/gloo/gloo_communicator.h"
#include "executor/local_launch.h"
#include "executor/rendezvous_dir.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/rendezvous/hash_store.h"

namespace reshard {
namespace {

using executor::BatchRankReport;

struct BatchExecFlags {
  int ranks = 0;
  int iters = 10;
  int warmup = 2;
  int timeout_seconds = 30;
  bool threads = false;
  bool json = false;
  bool bucketed = true;
};

absl::StatusOr<BatchExecFlags> ParseFlags(const CliArgs& args) {
  BatchExecFlags flags;
  if (!args.Has("local")) {
    return absl::InvalidArgumentError(
        "--local N is required (the number of local ranks)");
  }
  for (auto [flag, min, target] :
       {std::tuple{"local", 1, &flags.ranks},
        std::tuple{"iters", 1, &flags.iters},
        std::tuple{"warmup", 0, &flags.warmup},
        std::tuple{"timeout_seconds", 1, &flags.timeout_seconds}}) {
    absl::Status s = ParseIntFlag(args, flag, min, *target);
    if (!s.ok()) return s;
  }
  const std::string backend = args.Get("backend").value_or("gloo");
  if (backend != "gloo") {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend: batches run on gloo only (got \"", backend,
                     "\"): the batch runner packs buckets in host memory"));
  }
  flags.threads = args.Has("threads");
  flags.json = args.Has("json");
  flags.bucketed = !args.Has("no-bucketing");
  return flags;
}

// A planned batch and what runs of it.
struct BatchJob {
  PlannedBatch planned;
  executor::BatchWork work;
};

absl::StatusOr<BatchJob> PrepareJob(const std::optional<ServerFlags>& server,
                                    const CliArgs& args,
                                    const BatchExecFlags& flags) {
  absl::StatusOr<PlannedBatch> planned = PlanBatchFromFlags(args, server);
  if (!planned.ok()) return planned.status();
  absl::StatusOr<executor::BatchWork> work =
      RunnableBatch(*planned, flags.bucketed);
  if (!work.ok()) return work.status();
  BatchJob job{*std::move(planned), *std::move(work)};
  if (flags.ranks != job.planned.mesh.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local: ", flags.ranks, " ranks given but the mesh has ",
                     job.planned.mesh.world_size()));
  }
  return job;
}

// A bound on the whole run: every collective (rows, two validation and
// compile collectives per tensor) is bounded by the timeout.
std::chrono::milliseconds RunDeadline(const BatchJob& job,
                                      const BatchExecFlags& flags) {
  const int64_t calls = static_cast<int64_t>(job.work.rows.buckets.size() +
                                             2 * job.work.plans.size() + 2) *
                        (flags.iters + flags.warmup + 1);
  return std::chrono::seconds(flags.timeout_seconds * (calls + 2) + 10);
}

BatchRankReport RunOneRank(const BatchJob& job, int position,
                           std::shared_ptr<gloo::rendezvous::Store> store,
                           const BatchExecFlags& flags) {
  executor::GlooOptions options;
  options.timeout = std::chrono::seconds(flags.timeout_seconds);
  const int64_t rank = job.planned.mesh.RankAt(position);
  executor::GlooCommunicatorProvider provider(std::move(store), "exec-batch",
                                              rank, options);
  return executor::RunBatchRank(job.planned.mesh, job.work.plans, job.work.rows,
                                rank, provider,
                                {.iters = flags.iters,
                                 .warmup = flags.warmup,
                                 .bucketed = flags.bucketed});
}

BatchRankReport LostRank(int64_t rank, const executor::ChildResult& child) {
  BatchRankReport lost;
  lost.rank = rank;
  lost.status = absl::UnavailableError(
      absl::StrCat("rank ", rank, " gave no report (",
                   child.killed ? absl::StrCat("killed, signal ", child.signal)
                                : absl::StrCat("exit status ", child.exit_code),
                   ")"));
  return lost;
}

absl::StatusOr<std::vector<BatchRankReport>> RunProcesses(
    const BatchJob& job, const BatchExecFlags& flags) {
  absl::StatusOr<std::unique_ptr<executor::RendezvousDir>> rendezvous =
      executor::RendezvousDir::Create("reshardctl-exec-batch");
  if (!rendezvous.ok()) return rendezvous.status();
  const std::string& dir = (*rendezvous)->path();
  auto body = [&](int position) {
    return executor::SerializeBatchReport(
        RunOneRank(job, position,
                   std::make_shared<gloo::rendezvous::FileStore>(dir), flags));
  };
  absl::StatusOr<std::vector<executor::ChildResult>> children =
      executor::RunLocalRanks(flags.ranks, body, RunDeadline(job, flags));
  if (!children.ok()) return children.status();
  std::vector<BatchRankReport> reports;
  for (int p = 0; p < flags.ranks; ++p) {
    absl::StatusOr<BatchRankReport> report =
        executor::ParseBatchReport((*children)[p].output);
    reports.push_back(
        report.ok() ? *std::move(report)
                    : LostRank(job.planned.mesh.RankAt(p), (*children)[p]));
  }
  return reports;
}

std::vector<BatchRankReport> RunThreads(const BatchJob& job,
                                        const BatchExecFlags& flags) {
  auto store = std::make_shared<gloo::rendezvous::HashStore>();
  std::vector<BatchRankReport> reports(flags.ranks);
  std::vector<std::thread> threads;
  for (int p = 0; p < flags.ranks; ++p) {
    threads.emplace_back(
        [&, p] { reports[p] = RunOneRank(job, p, store, flags); });
  }
  for (std::thread& t : threads) t.join();
  return reports;
}

std::set<std::string> ExecBatchFlags() {
  std::set<std::string> flags = PlanFlags();
  for (const std::string& f : BatchFlags()) flags.insert(f);
  flags.insert({"local", "backend", "iters", "warmup", "timeout_seconds"});
  return flags;
}

}  // namespace

absl::Status RunExecBatch(const std::optional<ServerFlags>& server,
                          const std::vector<std::string>& argv,
                          std::ostream& out) {
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, ExecBatchFlags(),
                     {"merge", "json", "threads", "offline", "no-bucketing"});
  if (!args.ok()) return args.status();
  absl::StatusOr<BatchExecFlags> flags = ParseFlags(*args);
  if (!flags.ok()) return flags.status();
  absl::StatusOr<BatchJob> job = PrepareJob(server, *args, *flags);
  if (!job.ok()) return job.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<BatchRankReport>> reports =
      flags->threads ? RunThreads(*job, *flags) : RunProcesses(*job, *flags);
  if (!reports.ok()) return reports.status();
  if (absl::Status s = executor::BatchRankFailure(*reports); !s.ok()) return s;
  executor::BatchSummary summary =
      executor::SummarizeBatch(job->planned.mesh, job->work.rows,
                               job->planned.names, *std::move(reports));
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  BatchRunContext context;
  context.run.backend = "gloo";
  context.run.world_size = flags->ranks;
  context.run.launched_on = absl::StrCat(
      flags->ranks, " ranks (", flags->threads ? "threads" : "processes", ")");
  context.run.iters = flags->iters;
  context.run.warmup = flags->warmup;
  context.bucketed = flags->bucketed;
  return PrintBatchRun(job->planned.mesh, job->planned.batch, context, summary,
                       flags->json, out);
}

}  // namespace reshard
