// Random executable cases for the executor's property tests: meshes of 1-3
// dims with at most 8 ranks (random rank maps and flattened groups in any
// dim order), uneven shapes, random shard orders and Partial mixes, every
// dtype, plans from every planner.
#ifndef RESHARD_TESTS_EXECUTOR_EXECUTOR_CASES_H_
#define RESHARD_TESTS_EXECUTOR_EXECUTOR_CASES_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/launch/local_launch.h"
#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/search/planner.h"
#include "run_values/rank_report.h"
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

// Reports of several cases in one child's output: each framed as its
// length, ':' and its bytes.
inline std::string Frame(const std::string& s) {
  return absl::StrCat(s.size(), ":", s);
}

inline std::vector<std::string> Unframe(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    const size_t colon = s.find(':', at);
    if (colon == std::string::npos) break;
    const size_t n = std::stoull(s.substr(at, colon - at));
    out.push_back(s.substr(colon + 1, n));
    at = colon + 1 + n;
  }
  return out;
}

// Runs `body(rank)` on `world` rank processes, each returning the framed
// reports of `cases` cases, and returns them as reports[case][slot], where
// `slot(case, rank)` places rank's report; a child that died or sent fewer
// fails the test (its reports stay empty).
inline std::vector<std::vector<executor::RankReport>> RunCaseRanks(
    int world, size_t cases, const std::function<std::string(int)>& body,
    const std::function<int64_t(size_t, int)>& slot) {
  absl::StatusOr<std::vector<executor::ChildResult>> children =
      executor::RunLocalRanks(world, body, std::chrono::minutes(5));
  EXPECT_TRUE(children.ok()) << children.status();
  std::vector<std::vector<executor::RankReport>> reports(
      cases, std::vector<executor::RankReport>(world));
  for (int r = 0; children.ok() && r < world; ++r) {
    const executor::ChildResult& child = (*children)[r];
    EXPECT_EQ(child.exit_code, 0)
        << "rank " << r << " ended by signal " << child.signal;
    const std::vector<std::string> frames = Unframe(child.output);
    EXPECT_EQ(frames.size(), cases) << "rank " << r;
    for (size_t i = 0; i < frames.size() && i < cases; ++i) {
      absl::StatusOr<executor::RankReport> report =
          executor::ParseReport(frames[i]);
      EXPECT_TRUE(report.ok()) << report.status();
      if (report.ok()) reports[i][slot(i, r)] = *std::move(report);
    }
  }
  return reports;
}

// docs/DESIGN.md §6.2's checksum of `position`'s expected result, from the rule
// alone: Σ (k+1)·g(i_k) mod 2^61-1 over its box under `dst`.
inline uint64_t ExpectedChecksum(const Mesh& mesh, const TensorSpec& tensor,
                                 const DistState& dst, int64_t position) {
  const unsigned __int128 p = (static_cast<unsigned __int128>(1) << 61) - 1;
  const Box box = LocalBox(mesh, dst, tensor.shape(), position);
  const std::vector<int64_t>& shape = tensor.shape();
  unsigned __int128 sum = 0;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < box.numel(); ++k) {
    int64_t linear = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      linear = linear * shape[d] + box.offset[d] + idx[d];
    }
    const int64_t g = linear % 31 - 15;
    const unsigned __int128 value =
        g >= 0 ? static_cast<unsigned __int128>(g) : p - (-g);
    sum = (sum + static_cast<unsigned __int128>(k + 1) * value) % p;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < box.extent[d]) break;
      idx[d] = 0;
    }
  }
  return static_cast<uint64_t>(sum);
}

// The planned peak (a plan's or a batch schedule's peak_bytes) is the
// truth of what the ranks held: never below the largest measured peak,
// and at most 25% above it.
inline void ExpectPlannedPeak(const std::vector<executor::RankReport>& reports,
                              int64_t planned) {
  int64_t measured = 0;
  for (const executor::RankReport& r : reports) {
    measured = std::max(measured, r.peak_bytes);
  }
  EXPECT_LE(measured, planned) << "a rank held more than planned";
  EXPECT_LE(planned, measured + measured / 4)
      << "planned " << planned << " bytes, the ranks held at most " << measured;
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_EXECUTOR_EXECUTOR_CASES_H_
