// Random executable cases for the executor's property tests: meshes of 1-3
// dims with at most 8 ranks (random rank maps and flattened groups in any
// dim order), uneven shapes, random shard orders and Partial mixes, every
// dtype, plans from every planner.
#ifndef RESHARD_TESTS_EXECUTOR_EXECUTOR_CASES_H_
#define RESHARD_TESTS_EXECUTOR_EXECUTOR_CASES_H_

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "planner/planner.h"
#include "tests/planner/random_cases.h"

namespace reshard::testing {

struct ExecCase {
  Mesh mesh;
  Plan plan;
};

inline Mesh RandomSmallMesh(std::mt19937_64& rng) {
  const char* names[] = {"A", "B", "C"};
  MeshSpec spec;
  int64_t world = 1;
  do {
    spec = MeshSpec();
    world = 1;
    const int ndim = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int d = 0; d < ndim; ++d) {
      spec.shape.push_back(std::uniform_int_distribution<int>(1, 4)(rng));
      spec.dim_names.push_back(names[d]);
      world *= spec.shape.back();
    }
  } while (world > 8);
  if (rng() % 3 == 0) {
    spec.rank_map.resize(world);
    std::iota(spec.rank_map.begin(), spec.rank_map.end(), 0);
    std::shuffle(spec.rank_map.begin(), spec.rank_map.end(), rng);
  }
  const int ndim = static_cast<int>(spec.shape.size());
  for (int g = 0; ndim >= 2 && g < 2; ++g) {
    std::vector<int> dims(ndim);
    std::iota(dims.begin(), dims.end(), 0);
    std::shuffle(dims.begin(), dims.end(), rng);
    dims.resize(std::uniform_int_distribution<int>(2, ndim)(rng));
    std::vector<std::string> group;
    for (int d : dims) group.push_back(names[d]);
    if (std::find(spec.flattened.begin(), spec.flattened.end(), group) ==
        spec.flattened.end()) {
      spec.flattened.push_back(group);
    }
  }
  return *Mesh::Create(spec);
}

inline PlanOptions RandomOptions(std::mt19937_64& rng) {
  PlanOptions options;
  switch (rng() % 5) {
    case 0:
      options.planner = PlannerKind::kTorchGreedy;
      options.merge = rng() % 2;
      break;
    case 1:
      options.planner = PlannerKind::kTorchGraph;
      options.merge = rng() % 2;
      break;
    case 2:
      options.flatten_policy = FlattenPolicy::kAny;
      break;
    default:
      break;  // optimal, existing groups
  }
  return options;
}

// A case whose plan exists (torch planners refuse some requests; those
// draws are skipped).
inline ExecCase RandomExecCase(std::mt19937_64& rng) {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                          DType::kFloat16, DType::kInt32,   DType::kInt64};
  while (true) {
    Mesh mesh = RandomSmallMesh(rng);
    std::vector<int64_t> shape;
    const int rank = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int d = 0; d < rank; ++d) {
      shape.push_back(std::uniform_int_distribution<int64_t>(1, 9)(rng));
    }
    PlanRequest request;
    request.tensor = *TensorSpec::Create(shape, dtypes[rng() % 6]);
    request.src = RandomState(rng, mesh, rank);
    request.dst = RandomState(rng, mesh, rank);
    request.options = RandomOptions(rng);
    absl::StatusOr<Plan> plan = MakePlan(mesh, request);
    if (plan.ok()) return {std::move(mesh), *std::move(plan)};
  }
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_EXECUTOR_EXECUTOR_CASES_H_
