// Batch benchmarks (docs/DESIGN.md §8), printed as the markdown tables of
// docs/notes/2026-11-24-batches.md:
//  (e) executing batches on real Gloo ranks (one process per rank, loopback
//      TCP), bucketed against tensor by tensor in the same processes, runs
//      of the two alternating; every tensor validated by the data rule after
//      every timed run of either mode;
//  (f) planning a 1,000-tensor batch in-process (PlanBatch: plans and the
//      bucketed schedule), cold cache, p50 over repetitions: distinct
//      shapes, and 20 shapes repeated.
// Usage: batch_bench [--quick] [--only exec|plan]
#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/batch_tensors.h"
#include "executor/backends/provider_factory.h"
#include "executor/judge/data_rule.h"
#include "executor/judge/harness.h"
#include "executor/launch/local_launch.h"
#include "executor/run/batch_runner.h"
#include "executor/run/plan_runner.h"
#include "executor/stores/file_store.h"
#include "executor/stores/rendezvous_dir.h"
#include "planner/batch/batch_plan.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/state_text.h"
#include "planner/search/plan_cache.h"
#include "run_values/sample_stats.h"

namespace reshard {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kMiB = 1024 * 1024;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Mesh MeshOf(const std::vector<int64_t>& shape) {
  MeshSpec spec;
  spec.shape = shape;
  const char* names[] = {"A", "B", "C"};
  for (size_t d = 0; d < shape.size(); ++d) spec.dim_names.push_back(names[d]);
  return *Mesh::Create(spec);
}

struct ExecCase {
  std::string name;
  Mesh mesh;
  std::vector<Plan> plans;
  BucketSchedule schedule;
  int64_t bucket_bytes = kDefaultBucketBytes;
  int reps = 20;
};

ExecCase MakeExecCase(std::string name, const Mesh& mesh,
                      const std::vector<TensorSpec>& tensors, const char* src,
                      const char* dst, int64_t bucket_bytes, int reps) {
  ExecCase c{std::move(name), mesh, {}, {}, bucket_bytes, reps};
  std::vector<absl::StatusOr<PlanRequest>> requests;
  for (const TensorSpec& t : tensors) {
    requests.push_back(PlanRequest{
        t, *ParseDistState(src, mesh.ndim(), t.rank(), "src"),
        *ParseDistState(dst, mesh.ndim(), t.rank(), "dst"), PlanOptions()});
  }
  PlanCache cache(tensors.size());
  BatchPlan batch = *PlanBatch(mesh, requests, {bucket_bytes, false}, cache);
  for (absl::StatusOr<Plan>& p : batch.plans) c.plans.push_back(*p);
  c.schedule = std::move(batch.schedule);
  return c;
}

// One rank's buffers for every tensor, sources filled by the data rule.
struct RankBuffers {
  std::vector<std::vector<char>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
};

RankBuffers Buffers(const ExecCase& c, const executor::BatchRunner& runner) {
  RankBuffers b;
  for (size_t t = 0; t < c.plans.size(); ++t) {
    const TensorSpec& tensor = c.plans[t].tensor;
    b.in.emplace_back(runner.SourceNumel(t) * tensor.itemsize());
    b.out.emplace_back(runner.ResultNumel(t) * tensor.itemsize());
    executor::FillSource(c.mesh, tensor, c.plans[t].src, runner.position(),
                         b.in.back().data());
  }
  for (size_t t = 0; t < c.plans.size(); ++t) {
    b.in_ptrs.push_back(b.in[t].data());
    b.out_ptrs.push_back(b.out[t].data());
  }
  return b;
}

// Every tensor of the last run against the data rule; the failures.
int Invalid(const ExecCase& c, int64_t position,
            executor::CommunicatorProvider& provider, RankBuffers& b) {
  int invalid = 0;
  for (size_t t = 0; t < c.plans.size(); ++t) {
    invalid +=
        !executor::CheckResult(c.mesh, c.plans[t], position, provider, b.out[t])
             .check.validated;
  }
  return invalid;
}

struct Runners {
  std::unique_ptr<executor::BatchRunner> batch;
  std::vector<std::unique_ptr<executor::PlanRunner>> each;
};

Runners Compile(const ExecCase& c, int rank,
                executor::CommunicatorProvider& provider) {
  Runners r;
  r.batch = *executor::BatchRunner::Compile(c.mesh, c.plans, c.schedule, rank,
                                            provider);
  for (const Plan& plan : c.plans) {
    r.each.push_back(
        *executor::PlanRunner::Compile(c.mesh, plan, rank, provider));
  }
  return r;
}

// One timed run of a mode; false when it failed.
double RunMode(Runners& r, RankBuffers& b, bool bucketed) {
  const auto start = Clock::now();
  if (bucketed) {
    if (!r.batch->Run(b.in_ptrs, b.out_ptrs).ok()) return -1;
  } else {
    for (size_t t = 0; t < r.each.size(); ++t) {
      if (!r.each[t]->Run(b.in_ptrs[t], b.out_ptrs[t]).ok()) return -1;
    }
  }
  return Seconds(start);
}

// Rank `rank`'s timings: "bucketed seconds...;tensor seconds...;invalid".
std::string ExecOnRank(const ExecCase& c, int rank, const std::string& dir) {
  auto store = std::make_shared<executor::FileStore>(dir);
  std::unique_ptr<executor::CommunicatorProvider> provider =
      executor::MakeProvider(Backend::kGloo,
                             {store, c.name, rank, c.mesh.world_size(),
                              std::chrono::seconds(120)});
  Runners runners = Compile(c, rank, *provider);
  RankBuffers b = Buffers(c, *runners.batch);
  const int64_t position = c.mesh.PositionOfRank(rank);
  std::vector<double> times[2];
  int invalid = 0;
  for (int rep = -1; rep < c.reps; ++rep) {  // rep -1 warms both up
    for (int k = 0; k < 2; ++k) {
      const bool bucketed = (rep + k) % 2 == 0;  // alternate who goes first
      const double s = RunMode(runners, b, bucketed);
      if (s < 0) return "failed";
      invalid += Invalid(c, position, *provider, b);
      if (rep >= 0) times[bucketed ? 0 : 1].push_back(s);
    }
  }
  return absl::StrCat(absl::StrJoin(times[0], ","), ";",
                      absl::StrJoin(times[1], ","), ";", invalid);
}

struct ExecResult {
  double bucketed = 0;  // median over reps of the slowest rank
  double tensor = 0;
  int invalid = 0;
};

ExecResult RunExecCase(const ExecCase& c) {
  const int world = static_cast<int>(c.mesh.world_size());
  const auto dir = *executor::RendezvousDir::Create("reshard-batch-bench");
  auto children = executor::RunLocalRanks(
      world, [&](int rank) { return ExecOnRank(c, rank, dir->path()); },
      std::chrono::minutes(30));
  ExecResult result;
  std::vector<double> slowest[2] = {std::vector<double>(c.reps, 0),
                                    std::vector<double>(c.reps, 0)};
  for (int r = 0; children.ok() && r < world; ++r) {
    const std::vector<std::string> parts =
        absl::StrSplit((*children)[r].output, ';');
    if (parts.size() != 3) {
      std::cerr << c.name << ": rank " << r << " failed\n";
      std::exit(1);
    }
    for (int m = 0; m < 2; ++m) {
      const std::vector<std::string> v = absl::StrSplit(parts[m], ',');
      for (int i = 0; i < c.reps; ++i) {
        slowest[m][i] = std::max(slowest[m][i], std::stod(v[i]));
      }
    }
    result.invalid += std::stoi(parts[2]);
  }
  result.bucketed = executor::Median(slowest[0]);
  result.tensor = executor::Median(slowest[1]);
  return result;
}

void PrintExec(bool quick) {
  const int reps = quick ? 3 : 20;
  const std::vector<TensorSpec> small = SmallParameters(quick ? 40 : 200);
  std::vector<ExecCase> cases;
  cases.push_back(MakeExecCase("small S(0)->R, 4 ranks", MeshOf({4}), small,
                               "S(0)", "R", kDefaultBucketBytes, reps));
  cases.push_back(MakeExecCase("small S(0),R->R,S(1), 2x2", MeshOf({2, 2}),
                               small, "S(0),R", "R,S(1)", kDefaultBucketBytes,
                               reps));
  if (!quick) {
    for (int64_t cap : {kDefaultBucketBytes, 512 * kMiB}) {
      cases.push_back(MakeExecCase(
          absl::StrCat("layer S(0)->R, 4 ranks, ", cap / kMiB, " MiB buckets"),
          MeshOf({4}), TransformerLayer(), "S(0)", "R", cap, 7));
    }
  }
  std::cout << "## (e) batches on Gloo: bucketed vs tensor by tensor\n\n"
            << "| batch | tensors | collectives (tensor by tensor -> "
               "bucketed) | tensor by tensor ms | bucketed ms | speed-up | "
               "model speed-up | invalid tensors |\n"
            << "|---|---|---|---|---|---|---|---|\n";
  for (const ExecCase& c : cases) {
    const ExecResult r = RunExecCase(c);
    std::cout << absl::StrFormat(
        "| %s | %d | %d -> %d | %.2f | %.2f | %.2fx | %.2fx | %d |\n", c.name,
        c.plans.size(), c.schedule.collectives_before,
        c.schedule.collectives_after, r.tensor * 1e3, r.bucketed * 1e3,
        r.tensor / r.bucketed,
        c.schedule.time_us_before / c.schedule.time_us_after, r.invalid);
    std::cout.flush();
  }
}

// 1,000 requests on a 2x4 mesh: FSDP unshard, TP reshard and a reduction,
// by shape; `shapes` distinct requests (one per tensor when 1000).
std::vector<absl::StatusOr<PlanRequest>> PlanningBatch(int shapes) {
  const char* layouts[][2] = {
      {"S(0),R", "R,R"}, {"S(0),R", "R,S(1)"}, {"P(sum),S(1)", "R,S(1)"}};
  std::vector<absl::StatusOr<PlanRequest>> out;
  for (int i = 0; i < 1000; ++i) {
    const int s = i % shapes;
    const TensorSpec tensor =
        *TensorSpec::Create({64 + 8 * s, 128 + 4 * (s % 37)},
                            s % 2 ? DType::kBFloat16 : DType::kFloat32);
    const auto& l = layouts[s % 3];
    out.push_back(PlanRequest{tensor, *ParseDistState(l[0], 2, 2, "src"),
                              *ParseDistState(l[1], 2, 2, "dst"),
                              PlanOptions()});
  }
  return out;
}

void PrintPlanning(bool quick) {
  const Mesh mesh = MeshOf({2, 4});
  const int reps = quick ? 5 : 31;
  std::cout << "\n## (f) planning a 1,000-tensor batch (PlanBatch, cold "
               "cache each repetition)\n\n| batch | p50 ms | min ms | max ms "
               "| plans searched | collectives (before -> after) |\n"
               "|---|---|---|---|---|---|\n";
  for (int shapes : {1000, 20}) {
    const auto requests = PlanningBatch(shapes);
    std::vector<double> times;
    int64_t misses = 0;
    BucketSchedule schedule;
    for (int rep = 0; rep < reps; ++rep) {
      PlanCache cache(2048);
      const auto start = Clock::now();
      absl::StatusOr<BatchPlan> batch = PlanBatch(mesh, requests, {}, cache);
      times.push_back(Seconds(start));
      misses = cache.misses();
      schedule = batch->schedule;
    }
    std::cout << absl::StrFormat(
        "| 1,000 tensors, %d distinct (shape, layout) requests | %.2f | %.2f "
        "| %.2f | %d | %d -> %d |\n",
        misses, executor::Median(times) * 1e3, executor::Minimum(times) * 1e3,
        *std::max_element(times.begin(), times.end()) * 1e3, misses,
        schedule.collectives_before, schedule.collectives_after);
  }
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") quick = true;
    if (arg == "--only" && i + 1 < argc) only = argv[++i];
  }
  if (only.empty() || only == "exec") reshard::PrintExec(quick);
  if (only.empty() || only == "plan") reshard::PrintPlanning(quick);
  return 0;
}
