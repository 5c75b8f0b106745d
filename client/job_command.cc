#include "client/job_command.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "client/batch_command.h"
#include "client/calibrate_command.h"
#include "client/cli_args.h"
#include "client/cross_plan_command.h"
#include "client/cross_run_output.h"
#include "client/exit_codes.h"
#include "client/interrupt.h"
#include "client/job_interrupt.h"
#include "client/job_prepare_command.h"
#include "client/job_token_command.h"
#include "client/job_wait.h"
#include "client/plan_flags.h"
#include "client/run_flags.h"
#include "client/run_output.h"
#include "common/json_text.h"
#include "planner/format/plan_format.h"
#include "reshard/client.h"
#include "run_values/cross_work.h"

namespace reshard::client {
namespace {

constexpr char kJobUsage[] =
    "usage: reshardctl [--server HOST:PORT[,HOST:PORT...]] job list [--json]\n"
    "       reshardctl [--server ...] job show NAME [--json]\n"
    "       reshardctl [--server ...] job run NAME [plan flags | --plan FILE "
    "|\n"
    "         --batch FILE [--bucket_bytes B] [--no-bucketing]]\n"
    "         [--iters K] [--warmup W] [--timeout_seconds T]\n"
    "         [--deadline_seconds D] [--json]\n"
    "       reshardctl [--server ...] job prepare NAME --src_mesh ... "
    "--dst_mesh ...\n"
    "       reshardctl [--server ...] job run NAME --schedule ID\n"
    "       reshardctl [--server ...] job cancel NAME\n"
    "       reshardctl [--server ...] job calibrate NAME --mesh ... "
    "[--flatten ...]...\n"
    "       reshardctl --admin_token_file FILE job token NAME\n"
    "  Jobs are the reshard-agent processes that joined the Coordinator\n"
    "  under one name. Job calls go to the job's replica of the --server\n"
    "  list (a hash of the name), the one its agents use. `job VERB --help`\n"
    "  says more.\n";

constexpr char kListUsage[] =
    "usage: reshardctl [--server HOST:PORT[,...]] job list [--json]\n"
    "  One line per job on every listed replica: name, world size, backend,\n"
    "  generation, state (joining, ready, running), agents connected of the\n"
    "  world size, runs total and failed, rendezvous store keys and bytes.\n";

constexpr char kShowUsage[] =
    "usage: reshardctl [--server HOST:PORT[,...]] job show NAME [--json]\n"
    "  The job's state, runs and store, and one line per agent: rank,\n"
    "  connected (its dispatch stream is open), version, host.\n";

constexpr char kRunUsage[] =
    "usage: reshardctl [--server HOST:PORT[,...]] job run NAME\n"
    "         [plan flags | --plan FILE | --batch FILE [--bucket_bytes B]\n"
    "         [--no-bucketing]] [--iters K] [--warmup W]\n"
    "         [--timeout_seconds T] [--deadline_seconds D]\n"
    "         [--agent_wait_seconds S] [--json]\n"
    "         [--tensor NAME[,NAME...] --into NAME[,NAME...] [--allocate]\n"
    "          [--no-staging]]\n"
    "  Runs a plan on every agent of job NAME and prints the table (or JSON)\n"
    "  of `reshardctl exec`: per step the bytes, the slowest rank's min and\n"
    "  median, algbw and busbw; the checksums and the verdict. With the plan\n"
    "  flags of `reshardctl plan` the job's replica plans; --plan FILE runs a\n"
    "  plan JSON as `plan --json` prints it; --batch FILE plans a batch as\n"
    "  `plan --batch` does (on the service, mesh and options from the plan\n"
    "  flags) and runs it whole, bucketed or with --no-bucketing tensor by\n"
    "  tensor, printing what `exec --batch` prints. K timed runs after W "
    "warm-up\n"
    "  runs (10, 2); T bounds every collective (30 s); D bounds the whole\n"
    "  call, waiting for agents included (300 s); while the job's agents are\n"
    "  not all connected, stderr says every 3 s which ranks it waits for. A\n"
    "  rank whose agent was connected and went away fails the call after S\n"
    "  (UNAVAILABLE naming it; default: the server's --agent_wait_seconds,\n"
    "  10 s); ranks that never joined are waited for until D. Never\n"
    "  retried. Exit 0 only when every rank ran and validated.\n"
    "  With --tensor the run moves the job's own tensors instead of\n"
    "  generated data: on every rank, item i reads the tensor its processes\n"
    "  registered at the agent's --tensor_socket under the i-th --tensor\n"
    "  name and writes the one under the i-th --into name (a plan: one of\n"
    "  each). One execution, no warm-up; judged by the conservation\n"
    "  checksum (exact or skipped); results are staged and written only\n"
    "  once every rank validated (--no-staging writes them in place: a\n"
    "  failure may leave them half written). With --allocate a rank where\n"
    "  an --into name is not registered allocates it; its processes read\n"
    "  it with reshard.agent's LocalAgent.fetch.\n"
    "  With the cross-mesh flags of `plan --src_mesh ... --dst_mesh ...`\n"
    "  the job's replica plans a cross-mesh move and every agent runs its\n"
    "  part on generated data (the union of both rank maps must be the\n"
    "  job's ranks 0..N-1), printing what `exec --local N` prints for it;\n"
    "  with one --tensor and --into name, source ranks read the tensor their\n"
    "  processes registered, destination ranks write theirs, judged by the\n"
    "  conservation checksum and committed as above. --schedule ID runs the\n"
    "  cross-mesh move `job prepare` kept under ID instead, without\n"
    "  planning. With --batch FILE (lines of `plan --src_mesh --batch`)\n"
    "  the job's replica (with --offline this client) plans the batch and\n"
    "  the agents run it, every\n"
    "  tensor validated: on generated data, or with one --tensor and --into\n"
    "  name per line on the registered tensors, committed together.\n";

constexpr char kCancelUsage[] =
    "usage: reshardctl [--server HOST:PORT[,...]] job cancel NAME\n"
    "  Cancels the job's current run (its `job run` fails with CANCELLED)\n"
    "  and prints the run's id, or says no run was running.\n";

constexpr int kDefaultDeadlineSeconds = 300;
// How long the waiting report's GetJob calls may take.
constexpr absl::Duration kWaitReportDeadline = absl::Seconds(2);

// What watches a `job run` while its RunJob call waits, each through a
// client of its own (quick calls): which ranks it waits for, on stderr, and
// the user's Ctrl-C, which stops the run. A watcher whose client cannot be
// made is left out (the run goes on; Ctrl-C then ends reshardctl as usual).
struct RunWatchers {
  std::unique_ptr<JobWaitReporter> waiting;
  std::unique_ptr<JobRunInterrupter> interrupt;
};
RunWatchers WatchRun(const ServerFlags& server, const std::string& job) {
  ServerFlags quick = server;
  quick.deadline = kWaitReportDeadline;
  RunWatchers watchers;
  if (absl::StatusOr<std::unique_ptr<Client>> c = ConnectClient(quick);
      c.ok()) {
    watchers.waiting =
        std::make_unique<JobWaitReporter>(*std::move(c), job, std::cerr);
  }
  if (absl::StatusOr<std::unique_ptr<Client>> c = ConnectClient(quick);
      c.ok()) {
    watchers.interrupt =
        std::make_unique<JobRunInterrupter>(*std::move(c), job);
  }
  return watchers;
}

// A run's result as the user sees it: interrupted (exit 130) when their
// Ctrl-C stopped it, with the rows its finished executions measured, or
// with the failure when it ended before it could stop.
absl::StatusOr<JobRun> WithInterrupt(absl::StatusOr<JobRun> run,
                                     RunContext& context) {
  if (run.ok() && run->interrupted) {
    context.interrupted_after = run->executions_completed;
  } else if (!run.ok() && Interrupted()) {
    return MarkInterrupted(absl::CancelledError(
        absl::StrCat("interrupted: ", run.status().message())));
  }
  return run;
}

// --tensor A,B --into C,D: one binding per item; both or neither.
absl::StatusOr<std::vector<JobRunOptions::Tensors>> TensorFlags(
    const CliArgs& args) {
  const std::optional<std::string> sources = args.Get("tensor");
  const std::optional<std::string> into = args.Get("into");
  if (!sources.has_value() && !into.has_value()) {
    for (const char* flag : {"no-staging", "allocate"}) {
      if (args.Has(flag)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, ": only with --tensor"));
      }
    }
    return std::vector<JobRunOptions::Tensors>();
  }
  if (!sources.has_value() || !into.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        sources.has_value() ? "--into" : "--tensor", ": required with ",
        sources.has_value() ? "--tensor" : "--into",
        " (the registered names to read and to write)"));
  }
  const std::vector<std::string> from = absl::StrSplit(*sources, ',');
  const std::vector<std::string> to = absl::StrSplit(*into, ',');
  if (from.size() != to.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--into: ", to.size(), " names for ", from.size(),
                     " --tensor names (one per item)"));
  }
  std::vector<JobRunOptions::Tensors> tensors;
  for (size_t i = 0; i < from.size(); ++i) tensors.push_back({from[i], to[i]});
  return tensors;
}

// The job's knobs from the run flags; the call is bounded by the global
// --deadline_seconds.
JobRunOptions OptionsOf(const RunFlags& flags, const ServerFlags& server,
                        double agent_wait_seconds) {
  JobRunOptions options;
  options.agent_wait_seconds = agent_wait_seconds;
  options.iters = flags.iters;
  options.warmup = flags.warmup;
  options.timeout_seconds = flags.timeout_seconds;
  options.deadline =
      server.deadline.value_or(absl::Seconds(kDefaultDeadlineSeconds));
  return options;
}

// --agent_wait_seconds S (0, the default: the server's).
absl::StatusOr<double> AgentWaitFlag(const CliArgs& args) {
  const std::optional<std::string> text = args.Get("agent_wait_seconds");
  double seconds = 0;
  if (!text.has_value()) return seconds;
  if (!absl::SimpleAtod(*text, &seconds) || !(seconds > 0) || seconds > 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("--agent_wait_seconds: \"", *text,
                     "\" is not a number of seconds in (0, 86400]"));
  }
  return seconds;
}

// Runs the plan the flags describe: a file as given, or a request the
// job's replica plans.
absl::StatusOr<JobRun> RunFromFlags(Client& client, const std::string& job,
                                    const CliArgs& args,
                                    const JobRunOptions& options) {
  if (auto path = args.Get("plan")) {
    absl::StatusOr<MeshAndPlan> given = ReadPlanFile(*path);
    if (!given.ok()) return given.status();
    return client.RunJob(job, given->mesh, given->plan, options);
  }
  absl::StatusOr<Mesh> mesh = MeshFromFlags(args);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<PlanRequest> request = RequestFromFlags(*mesh, args);
  if (!request.ok()) return request.status();
  return client.RunJob(job, *mesh, *request, options);
}

// What the output says about a run beside its summary.
RunContext ContextOf(const std::string& job, const JobRun& run,
                     const JobRunOptions& options, int interrupted_after) {
  RunContext context;
  context.interrupted_after = interrupted_after;
  context.backend = run.backend;
  context.world_size = run.mesh.world_size();
  context.launched_on = absl::StrCat("job ", job, ", ", context.world_size,
                                     " agents, run ", run.run_id);
  context.iters = run.iters > 0 ? run.iters : options.iters;
  context.warmup = run.iters > 0 ? run.warmup : options.warmup;
  context.on_tensors = !options.tensors.empty();
  context.committed = run.committed;
  return context;
}

// `job run NAME --batch FILE`: planned as `plan --batch` plans it, run
// whole on the job's agents, printed as `exec --batch` prints it.
absl::Status RunBatch(const ServerFlags& server, const std::string& job,
                      const CliArgs& args, const RunFlags& flags,
                      const JobRunOptions& options, std::ostream& out) {
  absl::StatusOr<PlannedBatch> planned = PlanBatchFromFlags(args, server);
  if (!planned.ok()) return planned.status();
  absl::StatusOr<executor::BatchWork> work =
      RunnableBatch(*planned, flags.bucketed);
  if (!work.ok()) return work.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<JobRun> run;
  {
    const RunWatchers watchers = WatchRun(server, job);
    run = (*client)->RunJob(job, planned->mesh, *work, options);
  }
  RunContext context;
  run = WithInterrupt(std::move(run), context);
  if (!run.ok()) return run.status();
  context = ContextOf(job, *run, options, context.interrupted_after);
  context.planned = &planned->batch;
  return PrintRun(run->mesh, run->work, context, run->summary, flags.json, out);
}

// Runs `batch` on the job's agents: planned here (`works` set) or, without
// --offline, by the job's replica.
absl::StatusOr<JobRun> RunBatchOnJob(
    Client& client, const std::string& job, const CrossBatch& batch,
    const std::vector<executor::CrossWork>* works,
    const JobRunOptions& options) {
  if (works != nullptr) {
    return client.RunCrossBatchJob(job, CrossBatchTensors(batch, *works),
                                   batch.bucket_bytes, options);
  }
  absl::StatusOr<std::vector<Client::CrossBatchRequestTensor>> requests =
      CrossBatchRequests(batch);
  if (!requests.ok()) return requests.status();
  return client.RunCrossBatchJob(job, *requests, batch.bucket_bytes, options);
}

// `job run NAME --src_mesh ... --batch FILE [--offline]`: a cross-mesh
// batch planned by the job's replica (or with --offline here) and run on
// the job's agents (on generated data, or with --tensor on its registered
// tensors), printed as `exec --local` prints one (without --offline, by
// the tensors' names: the client holds no plans).
absl::Status RunCrossBatch(const ServerFlags& server, const std::string& job,
                           const CliArgs& args, const RunFlags& flags,
                           const JobRunOptions& options, std::ostream& out) {
  absl::StatusOr<CrossMeshes> meshes = CrossMeshesFromFlags(args);
  if (!meshes.ok()) return meshes.status();
  const bool offline = args.Has("offline");
  absl::StatusOr<CrossBatch> batch =
      offline ? CrossBatchFromFlags(args, *meshes)
              : CrossBatchLinesFromFlags(args, *meshes);
  if (!batch.ok()) return batch.status();
  if (!options.tensors.empty() &&
      options.tensors.size() != batch->items.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tensor: ", options.tensors.size(), " names for ",
                     batch->items.size(), " tensors in --batch (one each)"));
  }
  absl::StatusOr<std::vector<executor::CrossWork>> works =
      offline ? CrossBatchWorks(*batch) : std::vector<executor::CrossWork>();
  if (!works.ok()) return works.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<JobRun> run;
  {
    const RunWatchers watchers = WatchRun(server, job);
    run = RunBatchOnJob(**client, job, *batch, offline ? &*works : nullptr,
                        options);
  }
  RunContext context;
  run = WithInterrupt(std::move(run), context);
  if (!run.ok()) return run.status();
  PrintCrossBatchRun(
      {offline ? &*batch : nullptr, offline ? &*works : nullptr, run->backend,
       absl::StrCat("job ", job, ", run ", run->run_id), run->iters,
       run->warmup, run->ranks, run->summary, !options.tensors.empty(),
       run->committed, run->plan_sent},
      flags.json, out);
  return CrossRunVerdict(run->summary);
}

// `job run NAME --src_mesh ...` (or `--schedule ID`): a cross-mesh move
// planned by the job's replica (or prepared there) and run on its agents,
// printed as `exec --local` prints one.
absl::Status RunCross(const ServerFlags& server, const std::string& job,
                      const CliArgs& args, const RunFlags& flags,
                      const JobRunOptions& options, std::ostream& out) {
  if (flags.batch) return RunCrossBatch(server, job, args, flags, options, out);
  const std::optional<std::string> schedule = args.Get("schedule");
  // A schedule may hold a batch: the Coordinator checks its bindings.
  if (options.tensors.size() > 1 && !schedule.has_value()) {
    return absl::InvalidArgumentError(
        "job run --src_mesh: a cross-mesh run moves one tensor (one --tensor "
        "and --into name)");
  }
  std::optional<CrossMeshes> meshes;
  std::optional<CrossMeshRequest> request;
  if (!schedule.has_value()) {
    absl::StatusOr<CrossMeshes> m = CrossMeshesFromFlags(args);
    if (!m.ok()) return m.status();
    absl::StatusOr<CrossMeshRequest> r = CrossRequestFromFlags(args, *m);
    if (!r.ok()) return r.status();
    meshes = *std::move(m);
    request = *std::move(r);
  }
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<JobRun> run;
  {
    const RunWatchers watchers = WatchRun(server, job);
    run = schedule.has_value()
              ? (*client)->RunSchedule(job, *schedule, options)
              : (*client)->RunCrossJob(job, meshes->src, meshes->dst, *request,
                                       options);
  }
  RunContext context;
  run = WithInterrupt(std::move(run), context);
  if (!run.ok()) return run.status();
  if (run->cross_batch_tensors > 0) {  // a batch's schedule
    PrintCrossBatchRun(
        {nullptr, nullptr, run->backend,
         absl::StrCat("job ", job, ", run ", run->run_id), run->iters,
         run->warmup, run->ranks, run->summary, !options.tensors.empty(),
         run->committed, run->plan_sent},
        flags.json, out);
    return CrossRunVerdict(run->summary);
  }
  if (!run->cross.has_value()) {
    return absl::InternalError(
        "RunJob answered without its cross-mesh plan (an older server?)");
  }
  const executor::CrossWork work{run->cross->src_mesh, run->cross->dst_mesh,
                                 run->cross->plan};
  PrintCrossRun(
      {work, run->backend, absl::StrCat("job ", job, ", run ", run->run_id),
       run->iters, run->warmup, run->ranks, run->summary,
       !options.tensors.empty(), run->committed},
      flags.json, out);
  return CrossRunVerdict(run->summary);
}

absl::Status RunRun(const ServerFlags& server, const std::string& job,
                    absl::Span<const std::string> argv, std::ostream& out) {
  std::set<std::string> values = RunValueFlags();
  values.insert({"agent_wait_seconds", "tensor", "into", "schedule"});
  for (const std::string& flag : CrossPlanFlags()) values.insert(flag);
  std::set<std::string> switches = RunSwitches();
  switches.insert({"no-staging", "allocate", "offline"});
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, values, switches);
  if (!args.ok()) return args.status();
  absl::StatusOr<RunFlags> flags = ParseRunFlags(*args, "job run");
  if (!flags.ok()) return flags.status();
  absl::StatusOr<double> agent_wait = AgentWaitFlag(*args);
  if (!agent_wait.ok()) return agent_wait.status();
  absl::StatusOr<std::vector<JobRunOptions::Tensors>> tensors =
      TensorFlags(*args);
  if (!tensors.ok()) return tensors.status();
  JobRunOptions options = OptionsOf(*flags, server, *agent_wait);
  options.tensors = *std::move(tensors);
  options.no_staging = args->Has("no-staging");
  options.allocate = args->Has("allocate");
  if (args->Has("src_mesh") && args->Has("schedule")) {
    return absl::InvalidArgumentError(
        "job run: --schedule runs a prepared move; give it without "
        "--src_mesh and the other cross-mesh flags");
  }
  if (args->Has("src_mesh") || args->Has("schedule")) {
    return RunCross(server, job, *args, *flags, options, out);
  }
  if (flags->batch) return RunBatch(server, job, *args, *flags, options, out);
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<JobRun> run;
  {
    const RunWatchers watchers = WatchRun(server, job);
    run = RunFromFlags(**client, job, *args, options);
  }
  RunContext context;
  run = WithInterrupt(std::move(run), context);
  if (!run.ok()) return run.status();
  return PrintRun(run->mesh, run->work,
                  ContextOf(job, *run, options, context.interrupted_after),
                  run->summary, flags->json, out);
}

int64_t ConnectedAgents(const JobInfo& job) { return job.agents_connected; }

std::string AgentJson(const JobAgentInfo& a) {
  return absl::StrCat("{\"rank\": ", a.rank,
                      ", \"connected\": ", a.connected ? "true" : "false",
                      ", \"version\": ", JsonString(a.version),
                      ", \"host\": ", JsonString(a.host), "}");
}

std::string RunJson(const JobInfo::Run& run) {
  return absl::StrCat("{\"run_id\": ", JsonString(run.run_id),
                      ", \"result\": ", JsonString(run.result),
                      ", \"error\": ", JsonString(run.error),
                      ", \"seconds\": ", run.seconds, "}");
}

std::string ScheduleJson(const JobInfo::Schedule& s) {
  return absl::StrCat("{\"id\": ", JsonString(s.id),
                      ", \"tensors\": ", s.tensors,
                      ", \"delivered\": ", s.delivered ? "true" : "false", "}");
}

// The current run's progress, or null when none runs.
std::string ProgressJson(const JobInfo& job) {
  if (job.current_run.empty()) return "null";
  return absl::StrCat(
      "{\"executions_done\": ", job.current_run_executions_done,
      ", \"executions_total\": ", job.current_run_executions_total,
      ", \"seconds\": ", FormatDouble(job.current_run_seconds), "}");
}

// "none", or "RUN (37 of 120 executions, 4.2 s)".
std::string CurrentRunText(const JobInfo& job) {
  if (job.current_run.empty()) return "none";
  return absl::StrFormat("%s (%d of %d executions, %.1f s)", job.current_run,
                         job.current_run_executions_done,
                         job.current_run_executions_total,
                         job.current_run_seconds);
}

std::string JobJson(const JobInfo& job) {
  std::vector<std::string> agents;
  for (const JobAgentInfo& a : job.agents) agents.push_back(AgentJson(a));
  std::vector<std::string> runs;
  for (const JobInfo::Run& r : job.recent_runs) runs.push_back(RunJson(r));
  std::vector<std::string> schedules;
  for (const JobInfo::Schedule& s : job.schedules) {
    schedules.push_back(ScheduleJson(s));
  }
  return absl::StrCat(
      "{\"name\": ", JsonString(job.name), ", \"world_size\": ", job.world_size,
      ", \"backend\": ", JsonString(job.backend),
      ", \"generation\": ", job.generation,
      ", \"state\": ", JsonString(job.state), ", \"agents\": [",
      absl::StrJoin(agents, ", "),
      "], \"current_run\": ", JsonString(job.current_run),
      ", \"current_run_progress\": ", ProgressJson(job),
      ", \"run_calls\": ", job.run_calls, ", \"runs_total\": ", job.runs_total,
      ", \"runs_failed\": ", job.runs_failed,
      ", \"store_keys\": ", job.store_keys,
      ", \"store_bytes\": ", job.store_bytes, ", \"recent_runs\": [",
      absl::StrJoin(runs, ", "), "], \"schedules\": [",
      absl::StrJoin(schedules, ", "), "]}");
}

// Which jobs a listing shows the caller: the ones it may see, so that an
// empty table is not mistaken for an empty planner.
std::string ListScope(const ServerFlags& server) {
  if (!server.admin_token.empty()) {
    return "listed: every job (the admin token)\n";
  }
  if (!server.job_token.empty()) {
    return "listed: jobs without a job token and the job of the token "
           "presented\n";
  }
  return "listed: only jobs without a job token; one with a token is listed "
         "to callers presenting it (--job_token_file or $RESHARD_JOB_TOKEN) "
         "or the admin token\n";
}

absl::Status RunList(const ServerFlags& server,
                     absl::Span<const std::string> argv, std::ostream& out) {
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, {}, {"json"});
  if (!args.ok()) return args.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  absl::StatusOr<std::vector<JobInfo>> jobs = (*client)->ListJobs();
  if (!jobs.ok()) return jobs.status();
  if (args->Has("json")) {
    std::vector<std::string> items;
    for (const JobInfo& job : *jobs) items.push_back(JobJson(job));
    out << "{\"jobs\": [" << absl::StrJoin(items, ", ") << "]}\n";
    return absl::OkStatus();
  }
  out << absl::StrFormat("%-20s %6s %-7s %5s %-8s %7s %6s %6s %6s %10s\n",
                         "name", "world", "backend", "gen", "state", "agents",
                         "runs", "failed", "keys", "bytes");
  for (const JobInfo& j : *jobs) {
    out << absl::StrFormat(
        "%-20s %6d %-7s %5d %-8s %7s %6d %6d %6d %10d\n", j.name, j.world_size,
        j.backend, j.generation, j.state,
        absl::StrCat(ConnectedAgents(j), "/", j.world_size), j.runs_total,
        j.runs_failed, j.store_keys, j.store_bytes);
  }
  out << ListScope(server);
  return absl::OkStatus();
}

void PrintJob(const JobInfo& j, std::ostream& out) {
  out << absl::StrFormat(
      "job %s: world size %d, backend %s, generation %d, state %s\n", j.name,
      j.world_size, j.backend, j.generation, j.state);
  out << absl::StrFormat(
      "runs: %d total, %d failed; current run: %s; RunJob calls: %d\n",
      j.runs_total, j.runs_failed, CurrentRunText(j), j.run_calls);
  out << absl::StrFormat("store: %d keys, %d bytes\n", j.store_keys,
                         j.store_bytes);
  out << absl::StrFormat("agents: %d of %d connected\n", ConnectedAgents(j),
                         j.world_size);
  out << absl::StrFormat("%6s  %-9s  %-10s  %s\n", "rank", "connected",
                         "version", "host");
  for (const JobAgentInfo& a : j.agents) {
    out << absl::StrFormat("%6d  %-9s  %-10s  %s\n", a.rank,
                           a.connected ? "yes" : "no", a.version, a.host);
  }
  if (!j.schedules.empty()) {
    out << absl::StrFormat("prepared schedules (%d):\n", j.schedules.size());
  }
  for (const JobInfo::Schedule& s : j.schedules) {
    out << absl::StrFormat(
        "  %s  %d tensor%s, %s\n", s.id, s.tensors, s.tensors == 1 ? "" : "s",
        s.delivered ? "held by every agent" : "plans sent with its next run");
  }
  if (j.recent_runs.empty()) return;
  out << absl::StrFormat("recent runs (last %d):\n", j.recent_runs.size());
  for (const JobInfo::Run& r : j.recent_runs) {
    out << absl::StrFormat("  %-20s %-18s %9.3f s  %s\n", r.run_id, r.result,
                           r.seconds, r.error);
  }
}

absl::Status RunShowOrCancel(const ServerFlags& server, const std::string& verb,
                             const std::string& job,
                             absl::Span<const std::string> argv,
                             std::ostream& out) {
  absl::StatusOr<CliArgs> args = CliArgs::Parse(
      argv, {},
      verb == "show" ? std::set<std::string>{"json"} : std::set<std::string>{});
  if (!args.ok()) return args.status();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectClient(server);
  if (!client.ok()) return client.status();
  if (verb == "cancel") {
    absl::StatusOr<std::string> run = (*client)->CancelJob(job);
    if (!run.ok()) return run.status();
    out << (run->empty() ? absl::StrCat("job ", job, ": no run was running")
                         : absl::StrCat("job ", job, ": cancelled run ", *run))
        << "\n";
    return absl::OkStatus();
  }
  absl::StatusOr<JobInfo> info = (*client)->GetJob(job);
  if (!info.ok()) return info.status();
  if (args->Has("json")) {
    out << JobJson(*info) << "\n";
  } else {
    PrintJob(*info, out);
  }
  return absl::OkStatus();
}

const char* UsageOf(const std::string& verb) {
  if (verb == "list") return kListUsage;
  if (verb == "show") return kShowUsage;
  if (verb == "run") return kRunUsage;
  if (verb == "cancel") return kCancelUsage;
  if (verb == "calibrate") return kCalibrateUsage;
  if (verb == "token") return kJobTokenUsage;
  if (verb == "prepare") return kJobPrepareUsage;
  return nullptr;
}

bool IsHelp(const std::string& arg) { return arg == "--help" || arg == "help"; }

}  // namespace

const char* JobUsage(const std::string& verb) {
  const char* usage = UsageOf(verb);
  return usage != nullptr ? usage : kJobUsage;
}

absl::Status RunJobCommand(const ServerFlags& server,
                           const std::vector<std::string>& argv,
                           std::ostream& out) {
  if (!argv.empty() && IsHelp(argv[0])) {
    out << kJobUsage;
    return absl::OkStatus();
  }
  const std::string verb = argv.empty() ? "" : argv[0];
  const char* usage = UsageOf(verb);
  if (usage == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job: expected list, show, run, prepare, cancel, calibrate or token",
        verb.empty() ? "" : absl::StrCat(", not \"", verb, "\"")));
  }
  const auto rest = absl::MakeConstSpan(argv).subspan(1);
  if (!rest.empty() && IsHelp(rest[0])) {
    out << usage;
    return absl::OkStatus();
  }
  if (verb == "list") return RunList(server, rest, out);
  if (rest.empty() || rest[0].rfind("--", 0) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", verb, ": NAME (the job) is required"));
  }
  if (verb == "run") return RunRun(server, rest[0], rest.subspan(1), out);
  if (verb == "calibrate") {
    return RunCalibrate(server, rest[0], rest.subspan(1), out);
  }
  if (verb == "token") {
    return RunJobTokenCommand(server, rest[0], rest.subspan(1), out);
  }
  if (verb == "prepare") {
    return RunJobPrepareCommand(server, rest[0], rest.subspan(1), out);
  }
  return RunShowOrCancel(server, verb, rest[0], rest.subspan(1), out);
}

}  // namespace reshard::client
