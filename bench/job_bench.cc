// job_bench: what running a plan through the Coordinator costs.
// Starts a real reshard-planner and 8 reshard-agent processes on loopback.
//  (a) Dispatch overhead of RunJob for a tiny plan: the caller's wall time
//      minus the plan's executed time (the sum of its steps' medians; one
//      timed run, no warm-up), p50 and p99 over --runs runs.
//  (b) The same plans' per-step medians through RunJob and through
//      `reshardctl exec --local 8` (its JSON), interleaved over --rounds
//      rounds in one process; the ratio of the medians per step.
//  (c) A batch of 200 small tensors through RunJob (`job run --batch`),
//      bucketed against tensor by tensor, alternating over --rounds rounds.
// Every process it starts is stopped by PID. Usage:
//   job_bench [--runs N] [--rounds R] [--quick] [--only_batch]
#include <stdio.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/batch_tensors.h"
#include "common/json_value.h"
#include "common/median.h"
#include "planner/batch/batch_plan.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/state_text.h"
#include "planner/search/plan_cache.h"
#include "planner/search/planner.h"
#include "reshard/client.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/server/server_process.h"

namespace reshard {
namespace {

constexpr int kAgents = 8;
constexpr char kJob[] = "bench";

struct BenchFlags {
  int runs = 200;
  int rounds = 5;
  int batch_tensors = 200;
  bool only_batch = false;
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * v.size()));
  return v[i];
}

// One plan the benchmark runs: mesh and request flags as reshardctl takes
// them, and the request itself.
struct BenchPlan {
  std::string name;
  std::vector<std::string> flags;  // for reshardctl exec
  Mesh mesh;
  PlanRequest request;
};

BenchPlan MakeBenchPlan(std::string name, const std::string& mesh_flag,
                        MeshSpec spec, std::vector<int64_t> shape,
                        const std::string& src, const std::string& dst) {
  Mesh mesh = *Mesh::Create(std::move(spec));
  std::string shape_flag;
  for (int64_t d : shape)
    absl::StrAppend(&shape_flag, shape_flag.empty() ? "" : ",", d);
  PlanRequest request =
      *ParsePlanRequest(mesh, shape, "f32", src, dst, PlanOptions());
  return BenchPlan{
      std::move(name),
      {"--mesh", mesh_flag, "--shape", shape_flag, "--from", src, "--to", dst},
      std::move(mesh),
      std::move(request)};
}

MeshSpec Spec(std::vector<int64_t> shape, std::vector<std::string> names) {
  MeshSpec spec;
  spec.shape = std::move(shape);
  spec.dim_names = std::move(names);
  return spec;
}

// Waits (bounded) until the job's agents are all connected.
bool WaitReady(Client& client) {
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<JobInfo> job = client.GetJob(kJob);
    if (job.ok() && job->state == "ready") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

JobRunOptions Options(int iters, int warmup) {
  JobRunOptions options;
  options.iters = iters;
  options.warmup = warmup;
  options.deadline = absl::Seconds(120);
  return options;
}

// RunJob, or exit with why it failed or did not validate.
JobRun MustRun(Client& client, const BenchPlan& plan,
               const JobRunOptions& options) {
  absl::StatusOr<JobRun> run =
      client.RunJob(kJob, plan.mesh, plan.request, options);
  if (!run.ok() || !run->summary.validated) {
    fprintf(stderr, "job_bench: %s: %s\n", plan.name.c_str(),
            run.ok() ? run->summary.why_not.c_str()
                     : std::string(run.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(run);
}

void DispatchOverhead(Client& client, const BenchFlags& flags) {
  const BenchPlan tiny =
      MakeBenchPlan("tiny", "A=8", Spec({8}, {"A"}), {8}, "S(0)", "R");
  const JobRunOptions options = Options(1, 0);
  for (int i = 0; i < 5; ++i) MustRun(client, tiny, options);  // connect
  std::vector<double> wall, overhead;
  for (int i = 0; i < flags.runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const JobRun run = MustRun(client, tiny, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    double executed = 0;
    for (const executor::SummaryRow& step : run.summary.rows) {
      executed += step.seconds_median;
    }
    wall.push_back(seconds);
    overhead.push_back(seconds - executed);
  }
  printf(
      "(a) RunJob of a tiny plan (A=8, f32[8], S(0) -> R: one all_gather "
      "of 4 bytes per rank), iters 1, warmup 0, %d runs on %d agents\n",
      flags.runs, kAgents);
  printf("    wall      p50 %8.3f ms   p99 %8.3f ms\n", Median(wall) * 1e3,
         Quantile(wall, 0.99) * 1e3);
  printf("    overhead  p50 %8.3f ms   p99 %8.3f ms   (wall - executed)\n",
         Median(overhead) * 1e3, Quantile(overhead, 0.99) * 1e3);
}

// `reshardctl exec --local 8` of `plan`: each step's median seconds.
std::vector<double> ExecMedians(const BenchPlan& plan, int iters, int warmup) {
  std::string command =
      absl::StrCat(RESHARD_RESHARDCTL_BIN, " exec --local ", kAgents,
                   " --json --iters ", iters, " --warmup ", warmup);
  for (const std::string& flag : plan.flags) {
    absl::StrAppend(&command, " '", flag, "'");
  }
  std::string text;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) {
      text.append(buffer, n);
    }
    pclose(pipe);
  }
  absl::StatusOr<JsonValue> json = JsonValue::Parse(text);
  const JsonValue* steps = json.ok() ? json->Find("steps") : nullptr;
  if (steps == nullptr) {
    fprintf(stderr, "job_bench: exec gave no steps: %s\n", text.c_str());
    std::exit(1);
  }
  std::vector<double> medians;
  for (const JsonValue& step : steps->array()) {
    medians.push_back(step.Find("seconds_median")->number());
  }
  return medians;
}

void JobVersusExec(Client& client, const BenchFlags& flags) {
  const std::vector<BenchPlan> plans = {
      MakeBenchPlan("gather", "A=2,B=4", Spec({2, 4}, {"A", "B"}), {1024, 1024},
                    "S(0),S(1)", "R,R"),
      MakeBenchPlan("reduce", "A=2,B=4", Spec({2, 4}, {"A", "B"}), {1024, 1024},
                    "P(sum),P(sum)", "S(0),S(1)"),
      MakeBenchPlan("transpose", "A=8", Spec({8}, {"A"}), {2048, 1024}, "S(0)",
                    "S(1)")};
  constexpr int kIters = 10, kWarmup = 2;
  printf(
      "\n(b) per-step median through RunJob vs reshardctl exec --local %d "
      "(iters %d, warmup %d), median over %d interleaved rounds\n",
      kAgents, kIters, kWarmup, flags.rounds);
  printf("    %-10s %-15s %-6s %10s %12s %12s %8s\n", "plan", "op", "group",
         "bytes", "job_us", "exec_us", "ratio");
  for (const BenchPlan& plan : plans) {
    std::vector<std::vector<double>> job, exec;
    std::vector<executor::SummaryRow> rows;
    for (int round = 0; round < flags.rounds; ++round) {
      rows = MustRun(client, plan, Options(kIters, kWarmup)).summary.rows;
      std::vector<double> e = ExecMedians(plan, kIters, kWarmup);
      job.resize(rows.size());
      exec.resize(e.size());
      for (size_t k = 0; k < job.size(); ++k) {
        job[k].push_back(rows[k].seconds_median);
      }
      for (size_t k = 0; k < exec.size(); ++k) exec[k].push_back(e[k]);
    }
    for (size_t k = 0; k < job.size() && k < exec.size(); ++k) {
      const executor::SummaryRow& step = rows[k];
      const double j = Median(job[k]), e = Median(exec[k]);
      printf("    %-10s %-15s %-6s %10lld %12.1f %12.1f %8.3f\n",
             plan.name.c_str(), step.op.c_str(), step.group.c_str(),
             static_cast<long long>(step.bytes), j * 1e6, e * 1e6, j / e);
    }
  }
}

// (c) A batch through RunJob: 200 small parameter-like tensors S(0) -> R on
// the job's ranks, bucketed against tensor by tensor, the two modes
// alternating (who goes first alternates too) over --rounds rounds; every
// tensor validated on every rank in every run.
struct BatchMode {
  const char* name;
  executor::BatchWork work;
  std::vector<double> batch_seconds, wall_seconds;
};

BatchMode MakeBatchMode(const char* name, const Mesh& mesh,
                        const BatchPlan& batch, bool bucketed) {
  BatchMode mode{name, {}, {}, {}};
  for (const absl::StatusOr<Plan>& plan : batch.plans) {
    mode.work.plans.push_back(*plan);
  }
  mode.work.bucketed = bucketed;
  mode.work.schedule =
      bucketed
          ? batch.schedule
          : UnbucketedSchedule(mesh, mode.work.PlanPointers(), CostOptions());
  return mode;
}

void RunBatchMode(Client& client, const Mesh& mesh,
                  const std::vector<std::string>& names, BatchMode& mode) {
  const auto start = std::chrono::steady_clock::now();
  mode.work.names = names;
  absl::StatusOr<JobRun> run =
      client.RunJob(kJob, mesh, mode.work, Options(5, 1));
  if (!run.ok() || !run->summary.validated) {
    fprintf(stderr, "job_bench: batch %s: %s\n", mode.name,
            run.ok() ? run->summary.why_not.c_str()
                     : std::string(run.status().message()).c_str());
    std::exit(1);
  }
  mode.batch_seconds.push_back(run->summary.seconds_median);
  mode.wall_seconds.push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
}

void BatchThroughJob(Client& client, const BenchFlags& flags) {
  const Mesh mesh = *Mesh::Create(Spec({kAgents}, {"A"}));
  const std::vector<TensorSpec> tensors = SmallParameters(flags.batch_tensors);
  std::vector<absl::StatusOr<PlanRequest>> requests;
  std::vector<std::string> names;
  for (const TensorSpec& t : tensors) {
    requests.push_back(
        PlanRequest{t, *ParseDistState("S(0)", 1, t.rank(), "src"),
                    *ParseDistState("R", 1, t.rank(), "dst"), PlanOptions()});
    names.push_back(absl::StrCat("p", names.size()));
  }
  PlanCache cache(tensors.size());
  const BatchPlan batch = *PlanBatch(mesh, requests, BatchOptions(), cache);
  BatchMode modes[] = {MakeBatchMode("tensor by tensor", mesh, batch, false),
                       MakeBatchMode("bucketed", mesh, batch, true)};
  for (int round = 0; round < flags.rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      RunBatchMode(client, mesh, names, modes[(round + k) % 2]);
    }
  }
  printf(
      "\n(c) a batch through RunJob: %zu tensors (4 KiB-256 KiB, bf16/f32) "
      "S(0) -> R on %d agents, iters 5, warmup 1, median over %d rounds\n",
      tensors.size(), kAgents, flags.rounds);
  printf("    %-17s %11s %14s %14s\n", "mode", "collectives", "batch_ms",
         "RunJob_wall_ms");
  for (const BatchMode& mode : modes) {
    printf("    %-17s %11zu %14.2f %14.1f\n", mode.name,
           mode.work.schedule.buckets.size(), Median(mode.batch_seconds) * 1e3,
           Median(mode.wall_seconds) * 1e3);
  }
  printf("    speed-up of the batch: %.2fx\n",
         Median(modes[0].batch_seconds) / Median(modes[1].batch_seconds));
}

BenchFlags ParseFlags(int argc, char** argv) {
  BenchFlags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      flags.runs = 20;
      flags.rounds = 1;
      flags.batch_tensors = 20;
    } else if (arg == "--only_batch") {
      flags.only_batch = true;
    } else if (arg == "--runs" && i + 1 < argc) {
      (void)absl::SimpleAtoi(argv[++i], &flags.runs);
    } else if (arg == "--rounds" && i + 1 < argc) {
      (void)absl::SimpleAtoi(argv[++i], &flags.rounds);
    } else {
      fprintf(stderr,
              "usage: job_bench [--runs N] [--rounds R] [--quick] "
              "[--only_batch]\n");
      std::exit(2);
    }
  }
  return flags;
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  using namespace reshard;
  const BenchFlags flags = ParseFlags(argc, argv);
  testing::ServerProcess planner;
  if (planner.port() == 0) {
    fprintf(stderr, "job_bench: reshard-planner did not start\n");
    return 1;
  }
  testing::AgentProcesses agents(planner.address(), kJob, kAgents);
  agents.StartAll();
  ClientOptions options;
  options.target = planner.address();
  std::unique_ptr<Client> client = *Client::Create(options);
  if (!WaitReady(*client)) {
    fprintf(stderr, "job_bench: the agents did not join\n%s",
            agents.Logs().c_str());
    return 1;
  }
  if (!flags.only_batch) {
    DispatchOverhead(*client, flags);
    JobVersusExec(*client, flags);
  }
  BatchThroughJob(*client, flags);
  return 0;
}
