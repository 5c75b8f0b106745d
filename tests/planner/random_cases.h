// Random planning cases for property tests: meshes of 1-4 dims with sizes
// 1-4, tensors of rank 1-4 with sizes 1-9 (mostly uneven), random shard
// orders, Partial ops including sum/avg mixes, random registered groups; and
// meshes whose registered groups hold size-1 dims.
#ifndef RESHARD_TESTS_PLANNER_RANDOM_CASES_H_
#define RESHARD_TESTS_PLANNER_RANDOM_CASES_H_

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/tensor_spec.h"

namespace reshard::testing {

struct RandomCase {
  Mesh mesh;
  TensorSpec tensor;
  DistState src;
  DistState dst;
};

// `cases` divided by RESHARD_PROPERTY_CASES_DIVISOR when set (sanitizer
// builds run a fraction of the random cases).
inline int ScaledCases(int cases) {
  const char* divisor = std::getenv("RESHARD_PROPERTY_CASES_DIVISOR");
  const int d = divisor != nullptr ? std::max(1, std::atoi(divisor)) : 1;
  return cases / d;
}

inline DistState RandomState(std::mt19937_64& rng, const Mesh& mesh,
                             int tensor_rank) {
  // One partial family per state: {sum,avg}, {max} or {min}.
  const int family = std::uniform_int_distribution<int>(0, 5)(rng);
  std::vector<Placement> placements;
  for (int m = 0; m < mesh.ndim(); ++m) {
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    if (kind < 4) {
      placements.push_back(Placement::Shard(
          std::uniform_int_distribution<int>(0, tensor_rank - 1)(rng)));
    } else if (kind < 7) {
      placements.push_back(Placement::Replicate());
    } else {
      ReduceOp op = family == 4   ? ReduceOp::kMax
                    : family == 5 ? ReduceOp::kMin
                    : (rng() & 1) ? ReduceOp::kAvg
                                  : ReduceOp::kSum;
      placements.push_back(Placement::Partial(op));
    }
  }
  std::vector<ShardOrderEntry> order;
  for (int d = 0; d < tensor_rank; ++d) {
    ShardOrderEntry e{d, {}};
    for (int m = 0; m < mesh.ndim(); ++m) {
      if (placements[m] == Placement::Shard(d)) e.mesh_dims.push_back(m);
    }
    if (e.mesh_dims.empty()) continue;
    if (rng() % 2) std::shuffle(e.mesh_dims.begin(), e.mesh_dims.end(), rng);
    order.push_back(e);
  }
  return *DistState::Create(placements, order, tensor_rank, "state");
}

// A link with a bandwidth in [min_gbps, max_gbps] half of the time and a
// latency in [0, 10] µs half of the time (unset otherwise).
inline LinkParams RandomLink(std::mt19937_64& rng, double min_gbps,
                             double max_gbps) {
  LinkParams link;
  if (rng() % 2) {
    link.bandwidth_gbps =
        std::uniform_real_distribution<double>(min_gbps, max_gbps)(rng);
  }
  if (rng() % 2) {
    link.latency_us = std::uniform_real_distribution<double>(0, 10)(rng);
  }
  return link;
}

// Random link parameters for some of `spec`'s dims.
inline void AddRandomLinks(std::mt19937_64& rng, MeshSpec& spec) {
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    spec.links.push_back(RandomLink(rng, 5, 400));
  }
}

// Half the time, a measured all_to_all latency for `link`, up to the
// latency of a 10-hop ring at RandomLink's slowest hop.
inline void AddRandomAllToAllLatency(std::mt19937_64& rng, LinkParams& link) {
  if (rng() % 2) {
    link.all_to_all_us = std::uniform_real_distribution<double>(0, 100)(rng);
  }
}

// `c` with own links (Mesh::FlattenedLink) for some of its mesh's
// flattened groups, faster or slower than their dims' links, measured
// all_to_all latencies for some dims and groups, and half the time a
// measured base latency per collective (Mesh::base_us) up to a scheduler
// tick's 4 ms, which makes plans of fewer steps pay, and half the time a
// reduction rate (Mesh::reduce_gbps) as slow as CPUs shared by many ranks
// reduce, which makes reduce_scatters and all_reduces pay.
inline RandomCase WithRandomGroupLinks(std::mt19937_64& rng, RandomCase c) {
  MeshSpec spec = c.mesh.ToSpec();
  spec.links.resize(spec.shape.size());
  for (LinkParams& link : spec.links) AddRandomAllToAllLatency(rng, link);
  spec.flattened_links.clear();
  for (size_t f = 0; f < spec.flattened.size(); ++f) {
    spec.flattened_links.push_back(RandomLink(rng, 1, 800));
    AddRandomAllToAllLatency(rng, spec.flattened_links.back());
  }
  if (rng() % 2) {
    spec.base_us = std::uniform_real_distribution<double>(0, 4000)(rng);
  }
  if (rng() % 2) {
    spec.reduce_gbps = std::uniform_real_distribution<double>(0.2, 20)(rng);
  }
  c.mesh = *Mesh::Create(spec);
  return c;
}

// A random tensor (rank 1-4, dims up to `max_extent`) and states on `mesh`.
inline RandomCase RandomCaseOn(std::mt19937_64& rng, Mesh mesh,
                               int64_t max_extent) {
  std::vector<int64_t> shape;
  const int rank = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int d = 0; d < rank; ++d) {
    shape.push_back(std::uniform_int_distribution<int64_t>(1, max_extent)(rng));
  }
  TensorSpec tensor = *TensorSpec::Create(shape, DType::kFloat32);
  DistState src = RandomState(rng, mesh, rank);
  DistState dst = RandomState(rng, mesh, rank);
  return {std::move(mesh), std::move(tensor), src, dst};
}

// `max_extent` bounds each tensor dim: the default keeps tensors tiny (latency
// dominates every cost); large extents make bandwidth dominate. With
// `random_links`, some mesh dims get their own bandwidth and latency.
inline RandomCase MakeRandomCase(std::mt19937_64& rng, int64_t max_extent = 9,
                                 bool random_links = false) {
  MeshSpec spec;
  const int ndim = std::uniform_int_distribution<int>(1, 4)(rng);
  const char* names[] = {"A", "B", "C", "D"};
  for (int d = 0; d < ndim; ++d) {
    spec.shape.push_back(std::uniform_int_distribution<int>(1, 4)(rng));
    spec.dim_names.push_back(names[d]);
  }
  // Random registered groups, ascending (as PyTorch can) or not.
  const int groups =
      ndim >= 2 ? std::uniform_int_distribution<int>(0, 3)(rng) : 0;
  for (int g = 0; g < groups; ++g) {
    std::vector<int> dims(ndim);
    for (int d = 0; d < ndim; ++d) dims[d] = d;
    std::shuffle(dims.begin(), dims.end(), rng);
    dims.resize(std::uniform_int_distribution<int>(2, ndim)(rng));
    if (rng() % 4) std::sort(dims.begin(), dims.end());
    std::vector<std::string> group;
    for (int d : dims) group.push_back(names[d]);
    spec.flattened.push_back(group);
  }
  if (random_links) AddRandomLinks(rng, spec);
  return RandomCaseOn(rng, *Mesh::Create(spec), max_extent);
}

// One registered group for MakeUnitDimGroupCase: 1-3 dims of size > 1
// (ascending mostly, as PyTorch can flatten) with 1-2 size-1 dims at the
// front, the back or inside, as `where` (0, 1, 2) says.
inline std::vector<std::string> UnitDimGroup(std::mt19937_64& rng,
                                             const MeshSpec& spec,
                                             std::vector<int> big,
                                             std::vector<int> unit, int where) {
  std::shuffle(big.begin(), big.end(), rng);
  big.resize(std::uniform_int_distribution<size_t>(1, big.size())(rng));
  if (rng() % 4) std::sort(big.begin(), big.end());
  std::shuffle(unit.begin(), unit.end(), rng);
  unit.resize(std::uniform_int_distribution<size_t>(1, unit.size())(rng));
  std::vector<int> dims;
  if (where == 0 || big.size() < 2) {
    dims = unit;
    dims.insert(dims.end(), big.begin(), big.end());
    if (where != 0) std::rotate(dims.begin(), dims.begin() + 1, dims.end());
  } else if (where == 1) {
    dims = big;
    dims.insert(dims.end(), unit.begin(), unit.end());
  } else {
    dims = big;
    dims.insert(dims.begin() + 1, unit.begin(), unit.end());
  }
  std::vector<std::string> names;
  for (int d : dims) names.push_back(spec.dim_names[d]);
  return names;
}

// Meshes of 3-5 dims, 1-2 of them of size 1, with 1-4 registered groups
// that each hold size-1 dims at the front, the back or inside: a registered
// group serves the group of its dims of size > 1 (Mesh::ServingGroup).
inline RandomCase MakeUnitDimGroupCase(std::mt19937_64& rng,
                                       int64_t max_extent = 9,
                                       bool random_links = false) {
  MeshSpec spec;
  const int ndim = std::uniform_int_distribution<int>(3, 5)(rng);
  const int units = std::uniform_int_distribution<int>(1, 2)(rng);
  std::vector<int> dims(ndim), big, unit;
  for (int d = 0; d < ndim; ++d) dims[d] = d;
  std::shuffle(dims.begin(), dims.end(), rng);
  for (int d = 0; d < ndim; ++d) {
    const bool is_unit = std::find(dims.begin(), dims.begin() + units, d) !=
                         dims.begin() + units;
    (is_unit ? unit : big).push_back(d);
    spec.shape.push_back(
        is_unit ? 1 : std::uniform_int_distribution<int>(2, 4)(rng));
    spec.dim_names.push_back(std::string(1, static_cast<char>('A' + d)));
  }
  const int groups = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int g = 0; g < groups; ++g) {
    spec.flattened.push_back(UnitDimGroup(rng, spec, big, unit, g % 3));
  }
  if (random_links) AddRandomLinks(rng, spec);
  return RandomCaseOn(rng, *Mesh::Create(spec), max_extent);
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_PLANNER_RANDOM_CASES_H_
