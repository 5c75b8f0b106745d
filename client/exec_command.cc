#include "client/exec_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/batch_command.h"
#include "client/cli_args.h"
#include "client/cross_exec_command.h"
#include "client/cross_plan_command.h"
#include "client/interrupt.h"
#include "client/local_ranks.h"
#include "client/plan_flags.h"
#include "client/run_flags.h"
#include "client/run_output.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/backends/nccl/shared_gpu.h"
#include "executor/backends/provider_factory.h"
#include "executor/judge/harness.h"
#include "reshard/client.h"
#include "run_values/run_summary.h"

namespace reshard::client {
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
    "  (largest padded buffer), min and median microseconds of the slowest\n"
    "  rank (min_us, median_us),\n"
    "  algbw = bytes / median and busbw = algbw x the nccl-tests factor.\n"
    "  T bounds every collective (default 30); once a rank dies the others\n"
    "  get 2T + 1 s, then are stopped. Exit 0 only when validated.\n"
    "  --backend nccl runs on GPUs (data in device memory): rank r on GPU\n"
    "  r mod the GPU count; ranks beyond the GPUs share them as processes,\n"
    "  each its own NCCL host over loopback sockets (timings then are not\n"
    "  representative; --threads needs a GPU per rank).\n"
    "  Plan flags are those of `reshardctl plan`; without --server the plan\n"
    "  is made in-process.\n"
    "       reshardctl [--server HOST:PORT] exec --local N --batch FILE "
    "--mesh ...\n"
    "         [--bucket_bytes N] [--no-bucketing] [--iters K] [--warmup W]\n"
    "         [--timeout_seconds T] [--threads] [--json]\n"
    "  Runs a batch (lines of `plan --batch`) bucketed, or tensor by tensor\n"
    "  with --no-bucketing: one row per bucket (per step), the batch's time\n"
    "  per run, every tensor validated with its checksums by rank.\n"
    "       reshardctl [--server HOST:PORT] exec --local N --src_mesh ... "
    "--dst_mesh ...\n"
    "         [cross-mesh plan flags] [--iters K] [--warmup W] [--threads]\n"
    "         [--timeout_seconds T] [--json]\n"
    "  Runs a cross-mesh plan (flags of `plan --src_mesh`) on Gloo, N = the\n"
    "  ranks of both rank maps (0..N-1): times its pre-steps, transfers and\n"
    "  post-steps and validates every destination rank's result. With\n"
    "  --offline --batch FILE (lines of `plan --src_mesh --batch`) runs the\n"
    "  batch in exchanges bounded by --bucket_bytes, every tensor validated.\n";

struct ExecFlags {
  RunFlags run;
  int ranks = 0;
  Backend backend = Backend::kGloo;
  bool threads = false;
  int gpus = 0;  // NCCL: the GPUs found; ranks beyond them share
};

// The machine's GPUs, asked in a child process (this one forks the
// ranks), with errors that name the flag.
absl::StatusOr<executor::GpuProbe> ProbeGpusForExec() {
  absl::StatusOr<executor::GpuProbe> probe = executor::ProbeGpusInChild();
  if (probe.status().code() == absl::StatusCode::kFailedPrecondition) {
    return absl::FailedPreconditionError(
        "--backend nccl: this reshardctl was built without NCCL (CUDA and "
        "NCCL were not found when it was configured); use --backend gloo");
  }
  if (!probe.ok()) {
    return absl::Status(
        probe.status().code(),
        absl::StrCat("--backend nccl: ", probe.status().message()));
  }
  return probe;
}

// Whether NCCL can run these ranks here: a build with NCCL, a usable GPU,
// and with --threads a GPU per rank (ranks sharing a GPU must be processes,
// each its own NCCL host). Records the GPU count.
absl::Status CheckNccl(ExecFlags& flags) {
  absl::StatusOr<executor::GpuProbe> gpus = ProbeGpusForExec();
  if (!gpus.ok()) return gpus.status();
  if (gpus->count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--backend nccl: no usable GPU (", gpus->detail,
                     "); use --backend gloo"));
  }
  flags.gpus = gpus->count;
  if (flags.threads && flags.ranks > flags.gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--threads: ", flags.ranks, " NCCL ranks on ", flags.gpus,
        " GPUs; ranks sharing a GPU must be processes (drop --threads)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ExecFlags> ParseExecFlags(const CliArgs& args) {
  ExecFlags flags;
  if (!args.Has("local")) {
    return absl::InvalidArgumentError(
        "--local N is required (the number of local ranks)");
  }
  absl::Status s = ParseIntFlag(args, "local", 1, flags.ranks);
  if (!s.ok()) return s;
  absl::StatusOr<RunFlags> run = ParseRunFlags(args, "exec");
  if (!run.ok()) return run.status();
  flags.run = *run;
  if (auto name = args.Get("backend")) {
    absl::StatusOr<Backend> backend = ParseBackend(*name, "--backend");
    if (!backend.ok()) return backend.status();
    flags.backend = *backend;
  }
  flags.threads = args.Has("threads");
  if (flags.backend == Backend::kNccl) {
    s = CheckNccl(flags);
    if (!s.ok()) return s;
  }
  return flags;
}

// What runs: the work on its mesh, and a batch's planned form (printed).
struct ExecJob {
  Mesh mesh;
  executor::BatchWork work;
  std::optional<PlannedBatch> planned;
};

absl::StatusOr<Plan> PlanFromFlags(const std::optional<ServerFlags>& server,
                                   const Mesh& mesh, const CliArgs& args) {
  absl::StatusOr<PlanRequest> request = RequestFromFlags(mesh, args);
  if (!request.ok()) return request.status();
  if (!server.has_value()) return MakePlan(mesh, *request);
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(*server);
  if (!client.ok()) return client.status();
  return (*client)->PlanInline(mesh, *request);
}

absl::StatusOr<ExecJob> ObtainWork(const std::optional<ServerFlags>& server,
                                   const CliArgs& args,
                                   const ExecFlags& flags) {
  if (flags.run.batch) {
    absl::StatusOr<PlannedBatch> planned = PlanBatchFromFlags(args, server);
    if (!planned.ok()) return planned.status();
    absl::StatusOr<executor::BatchWork> work =
        RunnableBatch(*planned, flags.run.bucketed);
    if (!work.ok()) return work.status();
    Mesh mesh = planned->mesh;
    return ExecJob{std::move(mesh), *std::move(work), *std::move(planned)};
  }
  if (auto path = args.Get("plan")) {
    absl::StatusOr<MeshAndPlan> given = ReadPlanFile(*path);
    if (!given.ok()) return given.status();
    executor::BatchWork work =
        executor::BatchWork::OfPlan(given->mesh, std::move(given->plan));
    return ExecJob{std::move(given->mesh), std::move(work), std::nullopt};
  }
  absl::StatusOr<Mesh> mesh = MeshFromFlags(args);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<Plan> plan = PlanFromFlags(server, *mesh, args);
  if (!plan.ok()) return plan.status();
  executor::BatchWork work =
      executor::BatchWork::OfPlan(*mesh, *std::move(plan));
  return ExecJob{*std::move(mesh), std::move(work), std::nullopt};
}

// A bound on the whole run: every collective (rows, a validation and a
// compile collective per tensor) is bounded by the timeout.
std::chrono::milliseconds RunDeadline(const ExecJob& job,
                                      const ExecFlags& flags) {
  const int64_t calls = static_cast<int64_t>(job.work.Rows(job.mesh).size() +
                                             2 * job.work.plans.size() + 2) *
                        (flags.run.iters + flags.run.warmup + 1);
  return std::chrono::seconds(flags.run.timeout_seconds * (calls + 2) + 10);
}

// Ranks outnumber GPUs: each rank process is its own NCCL host.
bool SharesGpus(const ExecFlags& flags) {
  return flags.backend == Backend::kNccl && flags.ranks > flags.gpus;
}

RankReport RunOneRank(const ExecJob& job, int position,
                      std::shared_ptr<executor::KeyValueStore> store,
                      const ExecFlags& flags) {
  const auto timeout = std::chrono::seconds(flags.run.timeout_seconds);
  const int64_t rank = job.mesh.RankAt(position);
  executor::HarnessOptions harness;
  harness.iters = flags.run.iters;
  harness.warmup = flags.run.warmup;
  executor::RunOptions run;
  // Ctrl-C reaches every rank process (one process group) and the threads'
  // process: each stops before its next execution. A rank blocked on a
  // stopped peer fails as the peer's connections close.
  run.stopped = Interrupted;
  executor::ProviderSetup setup{std::move(store), "exec", rank,
                                job.mesh.world_size(), timeout};
  // Before CUDA starts in this process: it becomes its own NCCL host.
  if (SharesGpus(flags)) {
    executor::ShareGpu(absl::StrCat("reshardctl-", getppid(), "-", rank));
  }
  if (flags.backend == Backend::kNccl) {
    setup.device = executor::GpuOfRank(rank, flags.gpus);
  }
  absl::StatusOr<std::unique_ptr<executor::MemorySpace>> space =
      executor::MakeSpace(flags.backend, setup.device);
  if (!space.ok()) {
    RankReport refused;
    refused.rank = rank;
    refused.status = space.status();
    return refused;
  }
  run.space = space->get();
  std::unique_ptr<executor::CommunicatorProvider> provider =
      executor::MakeProvider(flags.backend, std::move(setup));
  return executor::RunGenerated(job.mesh, job.work, rank, *provider, run,
                                harness);
}

// The executions every rank finished (warmup included).
int CompletedByAll(const std::vector<RankReport>& reports) {
  int done = reports.empty() ? 0 : reports.front().executions_done;
  for (const RankReport& r : reports) done = std::min(done, r.executions_done);
  return done;
}

RunContext ContextOf(const ExecJob& job, const ExecFlags& flags) {
  RunContext context;
  context.backend = std::string(BackendName(flags.backend));
  context.world_size = flags.ranks;
  context.launched_on = absl::StrCat(
      flags.ranks, " ranks (", flags.threads ? "threads" : "processes", ")");
  if (SharesGpus(flags)) {
    absl::StrAppend(&context.launched_on, " sharing ", flags.gpus,
                    " GPU(s) over NCCL's socket transport: timings are not "
                    "representative");
  }
  context.iters = flags.run.iters;
  context.warmup = flags.run.warmup;
  if (job.planned.has_value()) context.planned = &job.planned->batch;
  return context;
}

// A cross-mesh plan's run (Gloo, generated data).
absl::Status RunCross(const std::optional<ServerFlags>& server,
                      const CliArgs& args, const ExecFlags& flags,
                      std::ostream& out) {
  if (flags.backend != Backend::kGloo) {
    return absl::UnimplementedError(
        "--backend nccl: cross-mesh plans run on Gloo only so far");
  }
  if (args.Has("plan")) {
    return absl::InvalidArgumentError(
        "--plan: cannot be combined with --src_mesh (plan files hold one "
        "mesh's plans)");
  }
  return RunCrossExec(server, args, {flags.ranks, flags.run, flags.threads},
                      out);
}

}  // namespace

const char* ExecUsage() { return kExecUsage; }

absl::Status RunExec(const std::optional<ServerFlags>& server,
                     const std::vector<std::string>& argv, std::ostream& out) {
  std::set<std::string> options = RunValueFlags();
  for (const std::string& flag : CrossPlanFlags()) options.insert(flag);
  options.insert({"local", "backend"});
  std::set<std::string> switches = RunSwitches();
  switches.insert({"threads", "offline"});
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, options, switches);
  if (!args.ok()) return args.status();
  absl::StatusOr<ExecFlags> flags = ParseExecFlags(*args);
  if (!flags.ok()) return flags.status();
  if (args->Has("src_mesh")) return RunCross(server, *args, *flags, out);
  absl::StatusOr<ExecJob> job = ObtainWork(server, *args, *flags);
  if (!job.ok()) return job.status();
  if (flags->ranks != job->mesh.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local: ", flags->ranks,
                     " ranks given but the mesh has ", job->mesh.world_size()));
  }
  InstallInterruptHandler();
  const auto start = std::chrono::steady_clock::now();
  const ExecJob& work = *job;
  absl::StatusOr<std::vector<RankReport>> reports = RunLocalRanks(
      flags->ranks, flags->threads, RunDeadline(work, *flags),
      AfterLoss(flags->run.timeout_seconds),
      [&](int p) { return work.mesh.RankAt(p); },
      [&](int p, std::shared_ptr<executor::KeyValueStore> store) {
        return RunOneRank(work, p, std::move(store), *flags);
      });
  if (!reports.ok()) return reports.status();
  RunContext context = ContextOf(*job, *flags);
  if (Interrupted()) {
    context.interrupted_after = CompletedByAll(*reports);
  } else if (absl::Status failure = executor::RankFailure(*reports);
             !failure.ok()) {
    return failure;
  }
  executor::RunSummary summary =
      executor::Summarize(job->mesh, job->work, *std::move(reports));
  summary.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return PrintRun(job->mesh, job->work, context, summary, flags->run.json, out);
}

}  // namespace reshard::client
