// The executor's own work on one rank, measured by instructions: plans
// compiled and run through PlanRunner, and a bucketed batch through
// BatchRunner, on a loopback communicator (each collective leaves the
// rank's buffers as if every peer had sent what this rank sent: no peers,
// no waiting). Everything it runs is deterministic, so callgrind's counts
// compare two builds where this 2-core machine's wall clock cannot
// (docs/notes/2026-11-26-run-path.md, "One run path"). Results are not
// validated: the data is not what peers would send. Usage: run_path_bench
// [--reps N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/loopback_plans.h"
#include "bench/loopback_provider.h"
#include "executor/run/batch_runner.h"
#include "executor/run/communicator_provider.h"
#include "executor/run/plan_runner.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/search/planner.h"

namespace reshard {
namespace {

using bench::LoopbackProvider;

// Compiles `plan` for rank 0 and runs it `reps` times.
void CompileAndRun(const Mesh& mesh, const Plan& plan, int reps) {
  LoopbackProvider provider(mesh.RankAt(0));
  auto runner =
      executor::PlanRunner::Compile(mesh, plan, mesh.RankAt(0), provider);
  if (!runner.ok()) std::exit(2);
  std::vector<char> in((*runner)->SourceNumel() * 4, 1);
  std::vector<char> out((*runner)->ResultNumel() * 4);
  executor::RunStats stats;
  for (int i = 0; i < reps; ++i) {
    if (!(*runner)->Run(in.data(), out.data(), &stats).ok()) std::exit(3);
  }
}

void BatchCompileAndRun(const Mesh& mesh, const std::vector<Plan>& plans,
                        int reps) {
  std::vector<const Plan*> ptrs;
  for (const Plan& p : plans) ptrs.push_back(&p);
  const BucketSchedule schedule = *ScheduleBuckets(mesh, ptrs, {});
  LoopbackProvider provider(mesh.RankAt(0));
  auto runner = executor::BatchRunner::Compile(mesh, plans, schedule,
                                               mesh.RankAt(0), provider);
  if (!runner.ok()) std::exit(4);
  std::vector<std::vector<char>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (size_t t = 0; t < plans.size(); ++t) {
    in.emplace_back((*runner)->SourceNumel(t) * 4, 1);
    out.emplace_back((*runner)->ResultNumel(t) * 4);
  }
  for (size_t t = 0; t < plans.size(); ++t) {
    in_ptrs.push_back(in[t].data());
    out_ptrs.push_back(out[t].data());
  }
  for (int i = 0; i < reps; ++i) {
    if (!(*runner)->Run(in_ptrs, out_ptrs).ok()) std::exit(5);
  }
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  using namespace reshard;
  int reps = 20;
  if (argc == 3 && std::string(argv[1]) == "--reps") reps = std::atoi(argv[2]);
  const Mesh mesh = bench::CubeMesh();
  // Every op, local steps, uneven shapes, multi-step plans.
  const std::vector<Plan> plans = {
      bench::MustPlan("run_path_bench", mesh, {256, 256}, "S(0),R,R", "R,R,R"),
      bench::MustPlan("run_path_bench", mesh, {256, 256}, "P(sum),R,R",
                      "R,R,R"),
      bench::MustPlan("run_path_bench", mesh, {256, 256}, "P(sum),R,R",
                      "S(0),R,R"),
      bench::MustPlan("run_path_bench", mesh, {256, 256}, "S(0),R,R",
                      "S(1),R,R"),
      bench::MustPlan("run_path_bench", mesh, {255, 129}, "S(0),S(1),P(sum)",
                      "R,S(0),S(1)"),
      bench::MustPlan("run_path_bench", mesh, {64, 64, 8}, "R,R,R",
                      "S(0),S(1),S(2)"),
      bench::MustPlan("run_path_bench", mesh, {97, 31}, "P(sum),S(0),P(sum)",
                      "S(1),R,R"),
  };
  for (const Plan& plan : plans) CompileAndRun(mesh, plan, reps);
  BatchCompileAndRun(mesh, plans, reps);
  std::printf("run_path_bench: %zu plans and one batch, %d runs each\n",
              plans.size(), reps);
  return 0;
}
