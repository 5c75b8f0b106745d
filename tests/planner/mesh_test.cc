// Proves that Mesh group math follows docs/DESIGN.md §2.1: the worked example
// on a (2,2,2) mesh (groups of A, C, (A,B), (A,C), (A,B,C) and the
// non-ascending (C,A)), and, on random meshes of up to 8 dims and 4096 devices
// with random non-identity rank maps, that GroupPositions / GroupRanks /
// IndexInGroup / MemberPosition agree with the definition computed by brute
// force: the members of p's group over G are the positions whose coordinates
// agree with p outside G, sorted lexicographically by their coordinates on G in
// G's order.
#include "planner/core/mesh.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using Positions = std::vector<int64_t>;

// The (2,2,2) mesh of docs/DESIGN.md §2.1 with names A, B, C.
Mesh AbcMesh(std::vector<int64_t> rank_map = {}) {
  return Mesh::Create({.shape = {2, 2, 2},
                       .dim_names = {"A", "B", "C"},
                       .rank_map = std::move(rank_map)})
      .value();
}

// The distinct groups over `group`, in order of their first position.
std::vector<Positions> DistinctGroups(const Mesh& mesh, const Group& group) {
  std::vector<Positions> groups;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    Positions ranks = mesh.GroupRanks(p, group);
    if (std::find(groups.begin(), groups.end(), ranks) == groups.end()) {
      groups.push_back(std::move(ranks));
    }
  }
  return groups;
}

TEST(MeshTest, WorkedExampleGroups) {
  const Mesh mesh = AbcMesh();
  constexpr int kA = 0, kB = 1, kC = 2;
  EXPECT_EQ(mesh.world_size(), 8);
  EXPECT_TRUE(mesh.has_identity_rank_map());
  EXPECT_EQ(mesh.DimIndex("C"), kC);
  EXPECT_EQ(mesh.DimIndex("Z"), -1);

  EXPECT_EQ(DistinctGroups(mesh, {kA}),
            (std::vector<Positions>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(DistinctGroups(mesh, {kC}),
            (std::vector<Positions>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(DistinctGroups(mesh, {kA, kB}),
            (std::vector<Positions>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(DistinctGroups(mesh, {kA, kC}),
            (std::vector<Positions>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(DistinctGroups(mesh, {kA, kB, kC}),
            (std::vector<Positions>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  // Non-ascending: C outermost.
  EXPECT_EQ(DistinctGroups(mesh, {kC, kA}),
            (std::vector<Positions>{{0, 4, 1, 5}, {2, 6, 3, 7}}));

  EXPECT_EQ(mesh.GroupName({kA, kC}), "A_C");
  EXPECT_EQ(mesh.GroupSize({kA, kC}), 4);
  EXPECT_EQ(mesh.GroupSize({kA, kB, kC}), 8);
}

// A merged step over one dim of size > 1 and size-1 dims is named by the
// registered group that serves it, as PyTorch runs it on that flattened
// mesh: all_gather on A_C_D, not C_D.
TEST(MeshTest, AStepOverOneRealDimIsNamedByItsServingGroup) {
  const Mesh mesh = Mesh::Create({.shape = {1, 4, 1, 4},
                                  .dim_names = {"A", "B", "C", "D"},
                                  .flattened = {{"A", "C", "D"}}})
                        .value();
  EXPECT_EQ(mesh.GroupName({2, 3}), "A_C_D");
  EXPECT_EQ(mesh.GroupName({3}), "D");
  EXPECT_EQ(mesh.GroupName({0, 1}), "A_B");  // none serves it
}

// A registered group serves every group with the same ranks in the same
// order: the groups equal to it once size-1 dims are dropped.
TEST(MeshTest, RegisteredGroupsServeGroupsEqualUpToSizeOneDims) {
  const Mesh mesh = Mesh::Create({.shape = {4, 2, 4, 1},
                                  .dim_names = {"A", "B", "C", "D"},
                                  .flattened = {{"B", "C", "D"},
                                                {"D", "A", "C"},
                                                {"A", "B"},
                                                {"A", "D", "B"}}})
                        .value();
  constexpr int kA = 0, kB = 1, kC = 2, kD = 3;
  // Both (A,B) and (A,D,B) stay registered: exact duplicates only merge.
  EXPECT_EQ(mesh.flattened().size(), 4u);
  ASSERT_NE(mesh.ServingGroup({kB, kC}), nullptr);
  EXPECT_EQ(*mesh.ServingGroup({kB, kC}), (Group{kB, kC, kD}));
  EXPECT_EQ(*mesh.ServingGroup({kD, kB, kC}), (Group{kB, kC, kD}));
  EXPECT_EQ(*mesh.ServingGroup({kA, kC}), (Group{kD, kA, kC}));
  // The first registered in registration order, as PyTorch's lookup by
  // layout: (A,B) before (A,D,B).
  EXPECT_EQ(*mesh.ServingGroup({kA, kD, kB}), (Group{kA, kB}));
  EXPECT_EQ(*mesh.ServingGroup({kA, kB}), (Group{kA, kB}));
  EXPECT_EQ(mesh.GroupName({kA, kD, kB}), "A_B");
  EXPECT_EQ(mesh.DimsName({kA, kD, kB}), "A_D_B");
  EXPECT_EQ(mesh.GroupName({kC, kD}), "C_D");  // none serves it
  EXPECT_EQ(mesh.GroupName({kC}), "C");
  EXPECT_EQ(mesh.ServingGroup({kC, kB}), nullptr);  // another order
  EXPECT_EQ(mesh.ServingGroup({kA, kB, kC}), nullptr);
  EXPECT_FALSE(mesh.IsRegistered({kC, kB, kD}));
  EXPECT_TRUE(mesh.IsRegistered({kB, kC}));
  EXPECT_TRUE(mesh.IsRegistered({kC, kD}));  // one dim of size > 1
  EXPECT_EQ(mesh.GroupName({kB, kC}), "B_C_D");
  EXPECT_EQ(mesh.GroupName({kA, kC}), "D_A_C");
  EXPECT_EQ(mesh.GroupName({kC, kB}), "C_B");
  EXPECT_EQ(mesh.GroupName({kC, kD}), "C_D");
  EXPECT_EQ(mesh.WithoutUnitDims({kD, kB, kD}), (Group{kB}));
  EXPECT_EQ(mesh.WithoutUnitDims({kD}), (Group{kD}));
  // SameRanks is what it says, at every position.
  const std::vector<Group> groups = {{kB, kC},     {kB, kC, kD}, {kD, kB, kC},
                                     {kC, kB},     {kA, kD, kB}, {kA, kB},
                                     {kB, kD, kA}, {kD},         {kB}};
  for (const Group& a : groups) {
    for (const Group& b : groups) {
      bool same = true;
      for (int64_t p = 0; p < mesh.world_size(); ++p) {
        same = same && mesh.GroupRanks(p, a) == mesh.GroupRanks(p, b);
      }
      EXPECT_EQ(mesh.SameRanks(a, b), same)
          << mesh.GroupName(a) << " vs " << mesh.GroupName(b);
    }
  }
}

// A flattened group's own link (calibrated meshes): validated, part of the
// mesh's identity only when set, so meshes without one keep their ids.
TEST(MeshTest, FlattenedGroupLinks) {
  MeshSpec spec{.shape = {2, 4},
                .dim_names = {"A", "B"},
                .flattened = {{"A", "B"}, {"B", "A"}}};
  const Mesh plain = Mesh::Create(spec).value();
  EXPECT_EQ(plain.CanonicalText(false), "2,4|A,B|0.1;1.0;|-:-;-:-;");
  EXPECT_EQ(plain.flattened_links().size(), 2u);
  spec.flattened_links = {{}, {}};
  EXPECT_TRUE(Mesh::Create(spec).value() == plain);

  spec.flattened_links = {{0.1, 30}, {}};
  const Mesh linked = Mesh::Create(spec).value();
  EXPECT_EQ(linked.CanonicalText(false),
            "2,4|A,B|0.1;1.0;|-:-;-:-;|0.1:30;-:-;");
  EXPECT_FALSE(linked == plain);
  EXPECT_EQ(linked.FlattenedLink({0, 1}), LinkParams({0.1, 30}));
  EXPECT_EQ(linked.FlattenedLink({1, 0}), LinkParams{});  // other order
  EXPECT_EQ(linked.FlattenedLink({0}), LinkParams{});     // one dim
  EXPECT_EQ(Mesh::Create(linked.ToSpec()).value(), linked);

  spec.flattened_links = {{0.1, 30}};
  EXPECT_EQ(Mesh::Create(spec).status().message(),
            "mesh.flattened_links: has 1 entries for 2 flattened groups");
  spec.flattened_links = {{}, {0, 1}};
  EXPECT_EQ(Mesh::Create(spec).status().message(),
            "mesh.flattened_links[1].bandwidth_gbps: must be in [1e-06, "
            "1e+09] GB/s, got 0");
}

// The copy rate (calibrated meshes): validated, part of the mesh's
// identity only when set.
TEST(MeshTest, CopyRate) {
  MeshSpec spec{.shape = {2}, .dim_names = {"A"}};
  const Mesh plain = Mesh::Create(spec).value();
  EXPECT_EQ(plain.CanonicalText(false), "2|A||-:-;");
  EXPECT_FALSE(plain.copy_gbps().has_value());
  spec.copy_gbps = 1.5;
  const Mesh copying = Mesh::Create(spec).value();
  EXPECT_EQ(copying.CanonicalText(false), "2|A||-:-;|copy:1.5");
  EXPECT_FALSE(copying == plain);
  EXPECT_EQ(Mesh::Create(copying.ToSpec()).value(), copying);
  spec.copy_gbps = 0;
  EXPECT_EQ(Mesh::Create(spec).status().message(),
            "mesh.copy_gbps: must be in [1e-06, 1e+09] GB/s, got 0");
}

TEST(MeshTest, BaseLatency) {
  MeshSpec spec{.shape = {2}, .dim_names = {"A"}};
  const Mesh plain = Mesh::Create(spec).value();
  EXPECT_FALSE(plain.base_us().has_value());
  spec.copy_gbps = 1.5;
  spec.base_us = 4000;
  const Mesh based = Mesh::Create(spec).value();
  EXPECT_EQ(based.CanonicalText(false), "2|A||-:-;|copy:1.5|base:4000");
  EXPECT_EQ(*based.base_us(), 4000);
  EXPECT_EQ(Mesh::Create(based.ToSpec()).value(), based);
  spec.copy_gbps.reset();
  EXPECT_EQ(Mesh::Create(spec)->CanonicalText(false), "2|A||-:-;|base:4000");
  EXPECT_FALSE(Mesh::Create(spec).value() == plain);
  spec.base_us = -1;
  EXPECT_EQ(Mesh::Create(spec).status().message(),
            "mesh.base_us: must be in [0, 1e+09] us, got -1");
}

// The reduction rate: validated, part of the mesh's identity only when
// set, so meshes without it keep their ids.
TEST(MeshTest, ReductionRate) {
  MeshSpec spec{.shape = {2}, .dim_names = {"A"}, .base_us = 4000};
  const Mesh plain = Mesh::Create(spec).value();
  EXPECT_FALSE(plain.reduce_gbps().has_value());
  EXPECT_EQ(plain.CanonicalText(false), "2|A||-:-;|base:4000");
  spec.reduce_gbps = 0.75;
  const Mesh reducing = Mesh::Create(spec).value();
  EXPECT_EQ(reducing.CanonicalText(false), "2|A||-:-;|base:4000|reduce:0.75");
  EXPECT_EQ(*reducing.reduce_gbps(), 0.75);
  EXPECT_FALSE(reducing == plain);
  EXPECT_EQ(Mesh::Create(reducing.ToSpec()).value(), reducing);
  spec.reduce_gbps = 2e9;
  EXPECT_EQ(Mesh::Create(spec).status().message(),
            "mesh.reduce_gbps: must be in [1e-06, 1e+09] GB/s, got 2e+09");
}

// A link's all_to_all latency is in the canonical text only when set, so
// meshes without one keep their ids; it is validated like a hop's.
TEST(MeshTest, AllToAllLatency) {
  MeshSpec spec{
      .shape = {2, 2}, .dim_names = {"A", "B"}, .flattened = {{"A", "B"}}};
  spec.links = {LinkParams{0.5, 20}, LinkParams{}};
  spec.flattened_links = {LinkParams{}};
  EXPECT_EQ(Mesh::Create(spec)->CanonicalText(false),
            "2,2|A,B|0.1;|0.5:20;-:-;");
  spec.links[0].all_to_all_us = 900;
  spec.flattened_links[0].all_to_all_us = 3100;
  const Mesh measured = Mesh::Create(spec).value();
  EXPECT_EQ(measured.CanonicalText(false),
            "2,2|A,B|0.1;|0.5:20:900;-:-;|-:-:3100;");
  EXPECT_EQ(Mesh::Create(measured.ToSpec()).value(), measured);
  spec.flattened_links[0].all_to_all_us = -1;
  EXPECT_EQ(Mesh::Create(spec).status().message(),
            "mesh.flattened_links[0].all_to_all_us: must be in [0, 1e+09] us, "
            "got -1");
}

TEST(MeshTest, WorkedExampleIndexAndMember) {
  const Mesh mesh = AbcMesh();
  constexpr int kA = 0, kB = 1, kC = 2;
  // Rank 5 = (1,0,1) is member 3 of its (A,C) group [0,1,4,5].
  EXPECT_EQ(mesh.GroupRanks(5, {kA, kC}), (Positions{0, 1, 4, 5}));
  EXPECT_EQ(mesh.IndexInGroup(5, {kA, kC}), 3);
  EXPECT_EQ(mesh.MemberPosition(5, {kA, kC}, 3), 5);
  EXPECT_EQ(mesh.MemberPosition(5, {kA, kC}, 0), 0);
  EXPECT_EQ(mesh.MemberPosition(5, {kA, kC}, 2), 4);
  // In (C,A) the same rank's group is [0,4,1,5]; 5 is still member 3, 4 is
  // member 1 and 1 is member 2.
  EXPECT_EQ(mesh.GroupRanks(5, {kC, kA}), (Positions{0, 4, 1, 5}));
  EXPECT_EQ(mesh.IndexInGroup(5, {kC, kA}), 3);
  EXPECT_EQ(mesh.IndexInGroup(4, {kC, kA}), 1);
  EXPECT_EQ(mesh.IndexInGroup(1, {kC, kA}), 2);
  EXPECT_EQ(mesh.MemberPosition(0, {kC, kA}, 2), 1);
  // Single dims and the whole mesh.
  EXPECT_EQ(mesh.IndexInGroup(5, {kA}), 1);
  EXPECT_EQ(mesh.IndexInGroup(5, {kB}), 0);
  EXPECT_EQ(mesh.IndexInGroup(6, {kA, kB, kC}), 6);
  EXPECT_EQ(mesh.GroupRanks(6, {kB}), (Positions{4, 6}));
  for (int64_t p = 0; p < 8; ++p) {
    EXPECT_EQ(mesh.Coordinate(p, kA), p / 4);
    EXPECT_EQ(mesh.Coordinate(p, kB), (p / 2) % 2);
    EXPECT_EQ(mesh.Coordinate(p, kC), p % 2);
  }
}

TEST(MeshTest, WorkedExampleWithRankMap) {
  // Ranks listed in row-major position order: position p holds rank 7 - p.
  const Mesh mesh = AbcMesh({7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_FALSE(mesh.has_identity_rank_map());
  EXPECT_EQ(mesh.RankAt(5), 2);
  // Positions are unchanged; ranks are the map applied to them.
  EXPECT_EQ(mesh.GroupPositions(5, {0, 2}), (Positions{0, 1, 4, 5}));
  EXPECT_EQ(mesh.GroupRanks(5, {0, 2}), (Positions{7, 6, 3, 2}));
  EXPECT_EQ(mesh.GroupRanks(5, {2, 0}), (Positions{7, 3, 6, 2}));
  EXPECT_EQ(mesh.IndexInGroup(5, {0, 2}), 3);
  // An explicit identity map is the identity.
  EXPECT_TRUE(AbcMesh({0, 1, 2, 3, 4, 5, 6, 7}).has_identity_rank_map());
}

TEST(MeshTest, LargestWorldSizeIndexArithmetic) {
  // 65536 * 32767 = 2147418112 <= 2^31 - 1: index math must not overflow.
  const Mesh mesh = Mesh::Create({.shape = {65536, 32767}}).value();
  const int64_t last = mesh.world_size() - 1;
  EXPECT_EQ(mesh.world_size(), int64_t{65536} * 32767);
  EXPECT_EQ(mesh.IndexInGroup(last, {0, 1}), last);
  EXPECT_EQ(mesh.IndexInGroup(last, {1, 0}), last);
  EXPECT_EQ(mesh.MemberPosition(0, {0, 1}, last), last);
  EXPECT_EQ(mesh.MemberPosition(0, {1, 0}, last), last);
  // Member 1 of (1,0) at position 0 moves one step along dim 0.
  EXPECT_EQ(mesh.MemberPosition(0, {1, 0}, 1), 32767);
  EXPECT_EQ(mesh.IndexInGroup(32767, {1, 0}), 1);
}

// Coordinates of every position, computed by an odometer (last dim fastest),
// independently of Mesh's strides.
class CoordinateTable {
 public:
  explicit CoordinateTable(const std::vector<int64_t>& shape)
      : ndim_(static_cast<int>(shape.size())) {
    int64_t world = 1;
    for (int64_t s : shape) world *= s;
    coords_.reserve(world * ndim_);
    std::vector<int64_t> c(ndim_, 0);
    for (int64_t p = 0; p < world; ++p) {
      coords_.insert(coords_.end(), c.begin(), c.end());
      for (int d = ndim_ - 1; d >= 0; --d) {
        if (++c[d] < shape[d]) break;
        c[d] = 0;
      }
    }
  }
  int64_t world() const { return static_cast<int64_t>(coords_.size()) / ndim_; }
  int64_t at(int64_t position, int dim) const {
    return coords_[position * ndim_ + dim];
  }

  // The members of `position`'s group over `group` by the definition.
  Positions BruteForceGroup(int64_t position,
                            absl::Span<const int> group) const {
    std::vector<bool> in_group(ndim_, false);
    for (int g : group) in_group[g] = true;
    Positions members;
    for (int64_t q = 0; q < world(); ++q) {
      bool same = true;
      for (int d = 0; d < ndim_ && same; ++d) {
        same = in_group[d] || at(q, d) == at(position, d);
      }
      if (same) members.push_back(q);
    }
    std::sort(members.begin(), members.end(), [&](int64_t a, int64_t b) {
      for (int g : group) {
        if (at(a, g) != at(b, g)) return at(a, g) < at(b, g);
      }
      return false;
    });
    return members;
  }

 private:
  int ndim_;
  std::vector<int64_t> coords_;
};

// Checks every group query of `mesh` at (`position`, `group`) against the
// brute-force definition.
void CheckGroup(const Mesh& mesh, const CoordinateTable& coords,
                absl::Span<const int64_t> rank_map, int64_t position,
                const Group& group) {
  SCOPED_TRACE(absl::StrCat("mesh [", absl::StrJoin(mesh.shape(), ","),
                            "] position ", position, " group (",
                            absl::StrJoin(group, ","), ")"));
  for (int d = 0; d < mesh.ndim(); ++d) {
    ASSERT_EQ(mesh.Coordinate(position, d), coords.at(position, d));
  }
  const Positions want = coords.BruteForceGroup(position, group);
  ASSERT_EQ(mesh.GroupSize(group), static_cast<int64_t>(want.size()));
  ASSERT_EQ(mesh.GroupPositions(position, group), want);

  Positions want_ranks;
  for (int64_t q : want) want_ranks.push_back(rank_map[q]);
  ASSERT_EQ(mesh.GroupRanks(position, group), want_ranks);

  const int64_t want_index =
      std::find(want.begin(), want.end(), position) - want.begin();
  ASSERT_EQ(mesh.IndexInGroup(position, group), want_index);

  Positions members;
  for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
    members.push_back(mesh.MemberPosition(position, group, i));
  }
  ASSERT_EQ(members, want);
  // Every member sees the same group and its own index in it; check the
  // first, the last and one in the middle.
  for (size_t i : {size_t{0}, want.size() / 2, want.size() - 1}) {
    ASSERT_EQ(mesh.IndexInGroup(want[i], group), static_cast<int64_t>(i));
    ASSERT_EQ(mesh.GroupPositions(want[i], group), want);
  }
}

// A random shape of 1..8 dims with world size <= `max_world`, including
// size-1 dims.
std::vector<int64_t> RandomShape(std::mt19937_64& rng, int64_t max_world) {
  const int ndim = std::uniform_int_distribution<int>(1, kMaxMeshDims)(rng);
  std::vector<int64_t> shape;
  int64_t world = 1;
  for (int d = 0; d < ndim; ++d) {
    const int64_t cap = std::min<int64_t>(7, max_world / world);
    shape.push_back(std::uniform_int_distribution<int64_t>(1, cap)(rng));
    world *= shape.back();
  }
  std::shuffle(shape.begin(), shape.end(), rng);
  return shape;
}

// A random permutation of world distinct non-negative ranks, not necessarily
// 0..N-1: perm[p] * scale + offset.
std::vector<int64_t> RandomRankMap(std::mt19937_64& rng, int64_t world) {
  std::vector<int64_t> ranks(world);
  std::iota(ranks.begin(), ranks.end(), 0);
  std::shuffle(ranks.begin(), ranks.end(), rng);
  const int64_t scale = std::uniform_int_distribution<int64_t>(1, 3)(rng);
  const int64_t offset = std::uniform_int_distribution<int64_t>(0, 10)(rng);
  for (int64_t& r : ranks) r = r * scale + offset;
  return ranks;
}

// A random ordered group of 1..ndim distinct dims, in any order.
Group RandomGroup(std::mt19937_64& rng, int ndim) {
  Group dims(ndim);
  std::iota(dims.begin(), dims.end(), 0);
  std::shuffle(dims.begin(), dims.end(), rng);
  dims.resize(std::uniform_int_distribution<int>(1, ndim)(rng));
  return dims;
}

TEST(MeshTest, RandomMeshesMatchBruteForce) {
  constexpr int kMeshes = 150;
  constexpr int kSamplesPerMesh = 8;
  constexpr int64_t kMaxWorld = 4096;
  std::mt19937_64 rng(0x5eed2024);
  int non_ascending = 0;
  for (int i = 0; i < kMeshes; ++i) {
    const std::vector<int64_t> shape = RandomShape(rng, kMaxWorld);
    const CoordinateTable coords(shape);
    const std::vector<int64_t> rank_map = RandomRankMap(rng, coords.world());
    absl::StatusOr<Mesh> mesh =
        Mesh::Create({.shape = shape, .rank_map = rank_map});
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    ASSERT_EQ(mesh->world_size(), coords.world());
    for (int s = 0; s < kSamplesPerMesh; ++s) {
      const int64_t position =
          std::uniform_int_distribution<int64_t>(0, coords.world() - 1)(rng);
      const Group group = RandomGroup(rng, mesh->ndim());
      non_ascending += !std::is_sorted(group.begin(), group.end());
      CheckGroup(*mesh, coords, rank_map, position, group);
      if (HasFatalFailure()) return;
    }
  }
  // The sampler must actually exercise non-ascending groups such as (C,A).
  EXPECT_GT(non_ascending, kMeshes);
}

// Every ordered group of 1..ndim dims, built recursively.
void OrderedGroups(int ndim, Group& prefix, std::vector<Group>& out) {
  if (!prefix.empty()) out.push_back(prefix);
  for (int d = 0; d < ndim; ++d) {
    if (std::find(prefix.begin(), prefix.end(), d) != prefix.end()) continue;
    prefix.push_back(d);
    OrderedGroups(ndim, prefix, out);
    prefix.pop_back();
  }
}

TEST(MeshTest, SmallMeshesExhaustivelyMatchBruteForce) {
  std::mt19937_64 rng(7);
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {2, 3, 1, 2}, {3, 2, 2}, {1, 4}, {5}, {2, 1, 3, 1, 2}}) {
    const CoordinateTable coords(shape);
    const std::vector<int64_t> rank_map = RandomRankMap(rng, coords.world());
    absl::StatusOr<Mesh> mesh =
        Mesh::Create({.shape = shape, .rank_map = rank_map});
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    std::vector<Group> groups;
    Group prefix;
    OrderedGroups(mesh->ndim(), prefix, groups);
    for (const Group& group : groups) {
      // The groups over `group` partition the mesh.
      absl::flat_hash_set<int64_t> seen;
      for (int64_t p = 0; p < coords.world(); ++p) {
        CheckGroup(*mesh, coords, rank_map, p, group);
        if (HasFatalFailure()) return;
        if (mesh->IndexInGroup(p, group) == 0) {
          for (int64_t q : mesh->GroupPositions(p, group)) {
            EXPECT_TRUE(seen.insert(q).second) << "position " << q;
          }
        }
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), coords.world());
    }
  }
}

}  // namespace
}  // namespace reshard
