// The plans the loopback benchmarks (bench/loopback_provider.h) run: f32
// plans on the 2x2x2 mesh A, B, C, made by the optimal planner; a plan that
// cannot be made ends the program, naming it.
#ifndef RESHARD_BENCH_LOOPBACK_PLANS_H_
#define RESHARD_BENCH_LOOPBACK_PLANS_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "planner/search/planner.h"

namespace reshard::bench {

inline Mesh CubeMesh() {
  MeshSpec spec;
  spec.shape = {2, 2, 2};
  spec.dim_names = {"A", "B", "C"};
  return *Mesh::Create(spec);
}

// `program` leads the message when the plan cannot be made (exit 1).
inline Plan MustPlan(const char* program, const Mesh& mesh,
                     std::vector<int64_t> shape, const char* src,
                     const char* dst) {
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, shape, "f32", src, dst, {});
  absl::StatusOr<Plan> plan =
      request.ok() ? MakePlan(mesh, *request) : request.status();
  if (!plan.ok()) {
    std::fprintf(stderr, "%s: %s\n", program,
                 std::string(plan.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(plan);
}

}  // namespace reshard::bench

#endif  // RESHARD_BENCH_LOOPBACK_PLANS_H_
