#include "client/exec_command.h"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/batch_command.h"
#include "client/batch_exec.h"
#include "client/cli_args.h"
#include "client/client.h"
#include "client/plan_flags.h"
#include "client/run_output.h"
#include "executor/gloo/gloo_communicator.h"
#include "executor/local_launch.h"
#include "executor/nccl/nccl_available.h"
#include "executor/rank_run.h"
#include "executor/rendezvous_dir.h"
#include "executor/run_summary.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/rendezvous/hash_store.h"

namespace reshard {
namespace {

using executor::RankReport;

constexpr char kExecUsage[] =
    "usage: reshardctl [--server HOST:PORT] exec --local N [plan flags | "
    "--plan FILE]\n"
    "         [--backend gloo|nccl] [--iters K] [--warmup W]\n"
    "         [--timeout_seconds T] [--threads] [--json]\n"
    "  Runs the plan on N ranks of this machine (N = the mesh's world size),\n"
    "  each a process (--threads: a thread), times every step over K runs\n"
    "  after W warm-up runs (defaults 10 and 2), validates the result\n"
    "  against the data rule and prints one row per step: op, group, bytes\n"
    "  (largest padded buffer), min and median seconds of the slowest rank,\n"
    "  algbw = bytes / median and busbw = algbw x the nccl-tests factor.\n"
    "  T bounds every collective (default 30). Exit 0 only when validated.\n"
    "  Plan flags are those of `reshardctl plan`; without --server the plan\n"
    "  is made in-process.\n"
    "       reshardctl [--server HOST:PORT] exec --local N --batch FILE "
    "--mesh ...\n"
    "         [--bucket_bytes N] [--no-bucketing] [--iters K] [--warmup W]\n"
    "         [--timeout_seconds T] [--threads] [--json]\n"
    "  Runs a batch (lines of `plan --batch`) bucketed, or tensor by tensor\n"
    "  with --no-bucketing: one row per bucket (per step), the batch's time\n"
    "  per run, every tensor validated with its checksums by rank.\n";

struct ExecFlags {
  int ranks = 0;
  std::string backend = "gloo";
  int iters = 10;
  int warmup = 2;
  int timeout_seconds = 30;
  bool threads = false;
  bool json = false;
};

absl::StatusOr<ExecFlags> ParseExecFlags(const CliArgs& args) {
  ExecFlags flags;
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
  flags.backend = args.Get("backend").value_or("gloo");
  if (flags.backend == "nccl") {
    // Why NCCL cannot run here: a build without CUDA and NCCL, or no usable
    // GPU. With a GPU it still cannot: the plan runner packs blocks in host
    // memory and NCCL needs device buffers (the NCCL tests run plans through
    // device-staged communicators; exec does not yet).
    absl::StatusOr<executor::GpuProbe> gpus = executor::ProbeGpus();
    if (!gpus.ok()) {
      return absl::FailedPreconditionError(
          "--backend nccl: this reshardctl was built without NCCL (CUDA and "
          "NCCL were not found when it was configured); use --backend gloo");
    }
    if (gpus->count == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("--backend nccl: no usable GPU (", gpus->detail,
                       "); use --backend gloo"));
    }
    return absl::FailedPreconditionError(
        "--backend nccl: reshardctl exec does not run plans on NCCL yet (its "
        "plan runner works on host memory); use --backend gloo");
  }
  if (flags.backend != "gloo") {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend: unknown backend \"", flags.backend,
                     "\"; expected gloo or nccl"));
  }
  flags.threads = args.Has("threads");
  flags.json = args.Has("json");
  return flags;
}

absl::StatusOr<MeshAndPlan> ObtainPlan(const std::optional<ServerFlags>& server,
                                       const CliArgs& args) {
  if (auto path = args.Get("plan")) return ReadPlanFile(*path);
  absl::StatusOr<Mesh> mesh = MeshFromFlags(args);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<PlanRequest> request = RequestFromFlags(*mesh, args);
  if (!request.ok()) return request.status();
  absl::StatusOr<Plan> plan;
  if (server.has_value()) {
    absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(*server);
    if (!client.ok()) return client.status();
    plan = (*client)->PlanInline(*mesh, *request);
  } else {
    plan = MakePlan(*mesh, *request);
  }
  if (!plan.ok()) return plan.status();
  return MeshAndPlan{*std::move(mesh), *std::move(plan)};
}

// A bound on the whole run: every collective is bounded by the timeout.
std::chrono::milliseconds RunDeadline(const Plan& plan,
                                      const ExecFlags& flags) {
  const int64_t calls = static_cast<int64_t>(plan.steps.size() + 2) *
                        (flags.iters + flags.warmup + 1);
  return std::chrono::seconds(flags.timeout_seconds * (calls + 2) + 10);
}

RankReport RunOneRank(const MeshAndPlan& job, int position,
                      std::shared_ptr<gloo::rendezvous::Store> store,
                      const ExecFlags& flags) {
  executor::GlooOptions options;
  options.timeout = std::chrono::seconds(flags.timeout_seconds);
  const int64_t rank = job.mesh.RankAt(position);
  executor::GlooCommunicatorProvider provider(std::move(store), "exec", rank,
                                              options);
  executor::RankOptions run;
  run.iters = flags.iters;
  run.warmup = flags.warmup;
  return executor::RunRank(job.mesh, job.plan, rank, provider, run);
}

// What a child that produced no report looked like.
RankReport LostRank(const MeshAndPlan& job, int position,
                    const executor::ChildResult& child) {
  RankReport lost;
  lost.rank = job.mesh.RankAt(position);
  lost.status = absl::UnavailableError(
      child.signal == SIGKILL && child.killed
          ? absl::StrCat("rank ", lost.rank, " did not finish in time")
      : child.killed
          ? absl::StrCat("rank ", lost.rank, " died of signal ", child.signal)
          : absl::StrCat("rank ", lost.rank, " exited with status ",
                         child.exit_code, " without a report"));
  return lost;
}

absl::StatusOr<std::vector<RankReport>> RunProcesses(const MeshAndPlan& job,
                                                     const ExecFlags& flags) {
  absl::StatusOr<std::unique_ptr<executor::RendezvousDir>> rendezvous =
      executor::RendezvousDir::Create("reshardctl-exec");
  if (!rendezvous.ok()) return rendezvous.status();
  const std::string& dir = (*rendezvous)->path();
  auto body = [&](int position) {
    return executor::SerializeReport(
        RunOneRank(job, position,
                   std::make_shared<gloo::rendezvous::FileStore>(dir), flags));
  };
  absl::StatusOr<std::vector<executor::ChildResult>> children =
      executor::RunLocalRanks(flags.ranks, body, RunDeadline(job.plan, flags));
  if (!children.ok()) return children.status();
  std::vector<RankReport> reports;
  for (int p = 0; p < flags.ranks; ++p) {
    absl::StatusOr<RankReport> report =
        executor::ParseReport((*children)[p].output);
    reports.push_back(report.ok() ? *std::move(report)
                                  : LostRank(job, p, (*children)[p]));
  }
  return reports;
}

std::vector<RankReport> RunThreads(const MeshAndPlan& job,
                                   const ExecFlags& flags) {
  auto store = std::make_shared<gloo::rendezvous::HashStore>();
  std::vector<RankReport> reports(flags.ranks);
  std::vector<std::thread> threads;
  for (int p = 0; p < flags.ranks; ++p) {
    threads.emplace_back(
        [&, p] { reports[p] = RunOneRank(job, p, store, flags); });
  }
  for (std::thread& t : threads) t.join();
  return reports;
}

}  // namespace

const char* ExecUsage() { return kExecUsage; }

absl::Status RunExec(const std::optional<ServerFlags>& server,
                     const std::vector<std::string>& argv, std::ostream& out) {
  if (HasBatchFlag(argv)) return RunExecBatch(server, argv, out);
  std::set<std::string> options = PlanFlags();
  options.insert(
      {"local", "backend", "iters", "warmup", "timeout_seconds", "plan"});
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argv, options, {"merge", "json", "threads", "offline"});
  if (!args.ok()) return args.status();
  absl::StatusOr<ExecFlags> flags = ParseExecFlags(*args);
  if (!flags.ok()) return flags.status();
  absl::StatusOr<MeshAndPlan> job = ObtainPlan(server, *args);
  if (!job.ok()) return job.status();
  if (flags->ranks != job->mesh.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local: ", flags->ranks,
                     " ranks given but the mesh has ", job->mesh.world_size()));
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<RankReport>> reports =
      flags->threads ? RunThreads(*job, *flags) : RunProcesses(*job, *flags);
  if (!reports.ok()) return reports.status();
  absl::Status failure = executor::RankFailure(*reports);
  if (!failure.ok()) return failure;
  executor::RunSummary summary =
      executor::Summarize(job->mesh, job->plan, *std::move(reports));
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  RunContext context;
  context.backend = flags->backend;
  context.world_size = flags->ranks;
  context.launched_on = absl::StrCat(
      flags->ranks, " ranks (", flags->threads ? "threads" : "processes", ")");
  context.iters = flags->iters;
  context.warmup = flags->warmup;
  return PrintRun(job->mesh, job->plan, context, summary, flags->json, out);
}

}  // namespace reshard
