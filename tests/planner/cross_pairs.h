// Random cross-mesh requests (docs/DESIGN.md §9) for property tests: two
// meshes of 1-3 dims of sizes 1-4 whose rank maps are disjoint,
// overlapping, nested or the same ranks permuted, a tensor of 1-3 dims and
// random placements (Partial destinations reduce by sum or avg).
#ifndef RESHARD_TESTS_PLANNER_CROSS_PAIRS_H_
#define RESHARD_TESTS_PLANNER_CROSS_PAIRS_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/core/local_layout.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "tests/planner/random_cases.h"

namespace reshard::testing {

struct Pair {
  Mesh src_mesh, dst_mesh;
  CrossMeshRequest request;
  std::string kind;
};

inline std::vector<int64_t> RandomShape(std::mt19937_64& rng,
                                        const std::vector<int64_t>& sizes) {
  const int dims = std::uniform_int_distribution<int>(1, 3)(rng);
  std::vector<int64_t> shape;
  for (int d = 0; d < dims; ++d) {
    shape.push_back(
        sizes[std::uniform_int_distribution<size_t>(0, sizes.size() - 1)(rng)]);
  }
  return shape;
}

// Dims of `world` in 1-3 factors, in a random order.
inline std::vector<int64_t> Factorize(std::mt19937_64& rng, int64_t world) {
  std::vector<int64_t> shape = {world};
  while (shape.size() < 3 && rng() % 2) {
    std::vector<int64_t> divisors;
    for (int64_t k = 2; k < shape.back(); ++k) {
      if (shape.back() % k == 0) divisors.push_back(k);
    }
    if (divisors.empty()) break;
    const int64_t k = divisors[rng() % divisors.size()];
    shape.back() /= k;
    shape.push_back(k);
  }
  std::shuffle(shape.begin(), shape.end(), rng);
  return shape;
}

inline Mesh MeshOf(std::mt19937_64& rng, std::vector<int64_t> shape,
                   std::vector<int64_t> ranks, const std::string& names) {
  MeshSpec spec{.shape = std::move(shape), .rank_map = std::move(ranks)};
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    spec.dim_names.push_back(std::string(1, names[d]));
  }
  if (spec.shape.size() >= 2 && rng() % 3 == 0) {
    spec.flattened = {{spec.dim_names[0], spec.dim_names[1]}};
  }
  absl::StatusOr<Mesh> mesh = Mesh::Create(spec);
  if (!mesh.ok()) std::abort();  // the generator makes valid meshes
  return *mesh;
}

inline std::vector<int64_t> Iota(int64_t from, int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

// The destination's ranks for pair kind `kind` (0 disjoint, 1 overlapping,
// 2 nested, 3 permuted), given the source's.
inline std::vector<int64_t> DestinationRanks(std::mt19937_64& rng, int kind,
                                             std::vector<int64_t> src_ranks,
                                             int64_t dst_world) {
  const int64_t ns = static_cast<int64_t>(src_ranks.size());
  std::vector<int64_t> out;
  if (kind == 0) out = Iota(ns, dst_world);
  if (kind == 1) {
    out =
        Iota(std::uniform_int_distribution<int64_t>(0, ns - 1)(rng), dst_world);
  }
  if (kind >= 2) {
    std::shuffle(src_ranks.begin(), src_ranks.end(), rng);
    out.assign(src_ranks.begin(), src_ranks.begin() + dst_world);
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

// A random f32 tensor of 1-3 dims moved between `src_mesh` and `dst_mesh`
// (the destination's Partial dims sum or avg).
inline CrossMeshRequest RandomRequest(std::mt19937_64& rng,
                                      const Mesh& src_mesh,
                                      const Mesh& dst_mesh) {
  const int rank = std::uniform_int_distribution<int>(1, 3)(rng);
  std::vector<int64_t> shape;
  for (int d = 0; d < rank; ++d) {
    shape.push_back(std::uniform_int_distribution<int64_t>(1, 9)(rng));
  }
  DistState dst = RandomState(rng, dst_mesh, rank);
  for (int m = 0; m < dst.mesh_ndim(); ++m) {
    const Placement& p = dst.placement(m);
    if (p.is_partial() && p.op() != ReduceOp::kSum &&
        p.op() != ReduceOp::kAvg) {
      dst.SetPartial(m, ReduceOp::kSum);
    }
  }
  return {*TensorSpec::Create(shape, DType::kFloat32),
          RandomState(rng, src_mesh, rank), dst};
}

inline Pair RandomPair(std::mt19937_64& rng) {
  const int kind = static_cast<int>(rng() % 4);
  const std::vector<int64_t> src_shape = RandomShape(rng, {1, 2, 3, 4});
  const int64_t ns = Numel(src_shape);
  std::vector<int64_t> dst_shape = RandomShape(rng, {1, 2, 3, 4});
  if (kind == 2) {
    while (Numel(dst_shape) > ns) dst_shape = RandomShape(rng, {1, 2, 3, 4});
  }
  if (kind == 3) dst_shape = Factorize(rng, ns);
  std::vector<int64_t> src_ranks = Iota(0, ns);
  std::shuffle(src_ranks.begin(), src_ranks.end(), rng);
  std::vector<int64_t> dst_ranks =
      DestinationRanks(rng, kind, src_ranks, Numel(dst_shape));
  Mesh src_mesh = MeshOf(rng, src_shape, src_ranks, "ABC");
  Mesh dst_mesh = MeshOf(rng, dst_shape, dst_ranks, "XYZ");
  CrossMeshRequest r = RandomRequest(rng, src_mesh, dst_mesh);
  const char* kinds[] = {"disjoint", "overlapping", "nested", "permuted"};
  return {std::move(src_mesh), std::move(dst_mesh), std::move(r), kinds[kind]};
}

inline std::string Describe(const Pair& p) {
  return absl::StrCat(p.kind, " src ", p.request.src.ToString(), " on [",
                      absl::StrJoin(p.src_mesh.shape(), ","), "] dst ",
                      p.request.dst.ToString(), " on [",
                      absl::StrJoin(p.dst_mesh.shape(), ","), "] shape [",
                      absl::StrJoin(p.request.tensor.shape(), ","), "]");
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_PLANNER_CROSS_PAIRS_H_
