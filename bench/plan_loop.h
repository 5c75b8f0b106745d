// The timed loop shared by the planning benchmarks: plans `request` cold
// each iteration, reports states expanded and labels the run with the
// redistribution.
#ifndef RESHARD_BENCH_PLAN_LOOP_H_
#define RESHARD_BENCH_PLAN_LOOP_H_

#include <string>

#include "benchmark/benchmark.h"
#include "planner/search/planner.h"

namespace reshard {

inline void PlanLoop(benchmark::State& state, const Mesh& mesh,
                     const PlanRequest& request) {
  int64_t expanded = 0;
  for (auto _ : state) {
    absl::StatusOr<Plan> plan = MakePlan(mesh, request);
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    expanded = plan->states_expanded;
    benchmark::DoNotOptimize(plan->total_time_us);
  }
  state.counters["states_expanded"] = static_cast<double>(expanded);
  state.SetLabel(request.src.ToString() + " -> " + request.dst.ToString());
}

}  // namespace reshard

#endif  // RESHARD_BENCH_PLAN_LOOP_H_
