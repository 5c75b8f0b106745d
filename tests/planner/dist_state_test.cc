// Proves that DistState compares, hashes, mutates and canonicalizes as
// stated: HasDefaultOrder, equality over placements and shard order, the
// mutators' order invariant, Canonical (size-1 mesh dims become R) and
// absl::Hash agreeing with equality over every spelling of a state.
#include "planner/core/dist_state.h"

#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "planner/core/mesh.h"
#include "planner/core/placement.h"
#include "planner/core/state_text.h"
#include "tests/planner/random_cases.h"

namespace reshard {
namespace {

absl::StatusOr<DistState> Parse(absl::string_view text, int mesh_ndim,
                                int tensor_rank) {
  return ParseDistState(text, mesh_ndim, tensor_rank, "src");
}

TEST(DistStateTest, HasDefaultOrder) {
  struct OrderCase {
    std::string text;
    int mesh_ndim;
    bool want;
  };
  const std::vector<OrderCase> cases = {
      {"S(0),S(0)", 2, true},
      {"S(0)[0]S(0)[1]", 2, true},
      {"S(0)[1]S(0)[0]", 2, false},
      {"S(0),S(1)", 2, true},
      {"R,P(sum)", 2, true},
      {"S(1)[1],S(0),S(1)[0]", 3, false},
      {"S(0)[0],S(1),S(0)[1]", 3, true},
      {"S(0)[0],S(0)[2],S(0)[1]", 3, false},
  };
  for (const OrderCase& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<DistState> state = Parse(c.text, c.mesh_ndim, 2);
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_EQ(state->HasDefaultOrder(), c.want);
  }
}

TEST(DistStateTest, EqualityFollowsPlacementsAndOrder) {
  auto parse = [](absl::string_view text) { return Parse(text, 2, 2).value(); };
  EXPECT_TRUE(parse("S(0)[0]S(0)[1]") == parse("S(0),S(0)"));
  EXPECT_TRUE(parse("S(0)[1]S(0)[0]") != parse("S(0),S(0)"));
  EXPECT_TRUE(parse("S(0),R") != parse("R,S(0)"));
  EXPECT_TRUE(parse("P(sum),R") != parse("P(avg),R"));
  EXPECT_TRUE(parse("S(0),R") != parse("S(1),R"));
}

TEST(DistStateTest, MutatorsKeepTheOrderInvariant) {
  auto parse = [](absl::string_view text) { return Parse(text, 3, 2).value(); };
  // Appending mesh dim 1 then mesh dim 0 gives the order (1, 0).
  DistState state = DistState::Replicated(3);
  state.AppendShard(1, 0);
  state.AppendShard(0, 0);
  EXPECT_TRUE(state == parse("S(0)[1]S(0)[0]R")) << state.ToString();
  EXPECT_EQ(absl::Hash<DistState>{}(state),
            absl::Hash<DistState>{}(parse("S(0)[1]S(0)[0]R")));

  // Removing the outermost split renumbers the rest.
  state = parse("S(0),S(0),S(0)");
  state.SetReplicate(0);
  EXPECT_TRUE(state == parse("R,S(0),S(0)")) << state.ToString();
  state.SetPartial(1, ReduceOp::kAvg);
  EXPECT_TRUE(state == parse("R,P(avg),S(0)")) << state.ToString();
  state.AppendShard(1, 1);
  EXPECT_TRUE(state == parse("R,S(1),S(0)")) << state.ToString();
}

TEST(DistStateTest, CanonicalReplacesSize1DimsWithReplicate) {
  const Mesh mesh_21 = Mesh::Create({.shape = {2, 1, 2}}).value();
  auto parse = [](absl::string_view text) { return Parse(text, 3, 2).value(); };
  EXPECT_EQ(parse("S(0),S(0),P(sum)").Canonical(mesh_21).ToString(),
            "S(0),R,P(sum)");
  EXPECT_EQ(parse("R,P(avg),R").Canonical(mesh_21).ToString(), "R,R,R");
  // Dims of size > 1 are untouched.
  EXPECT_TRUE(parse("S(1),R,S(0)").Canonical(mesh_21) == parse("S(1),R,S(0)"));

  // A size-1 dim's position in a shard order does not matter: both orders
  // canonicalize to (1, 2).
  const Mesh mesh_12 = Mesh::Create({.shape = {1, 2, 2}}).value();
  const DistState outer_last = parse("S(0)[2]S(0)[0]S(0)[1]");
  const DistState outer_first = parse("S(0),S(0),S(0)");
  EXPECT_TRUE(outer_last != outer_first);
  EXPECT_EQ(outer_last.Canonical(mesh_12).ToString(), "R,S(0)[0],S(0)[1]");
  EXPECT_TRUE(outer_last.Canonical(mesh_12) == outer_first.Canonical(mesh_12));
  // ... but the order of dims of size > 1 does.
  EXPECT_TRUE(parse("R,S(0)[1],S(0)[0]").Canonical(mesh_12) !=
              parse("R,S(0),S(0)").Canonical(mesh_12));

  // Canonical is idempotent.
  const DistState once = outer_last.Canonical(mesh_12);
  EXPECT_TRUE(once.Canonical(mesh_12) == once);
}

TEST(DistStateTest, HashAgreesWithEquality) {
  // Each row lists spellings of one state (mesh of 3 dims, tensor rank 2).
  const std::vector<std::vector<std::string>> spellings = {
      {"S(0),R,P(sum)", "S(0) R P(sum)",
       "Shard(dim=0), Replicate(), Partial(sum)",
       "[Shard(dim=0), Replicate(), Partial(reduce_op=sum)]", "S(-2),R,P"},
      {"S(0)[1]S(0)[0]R", "S(0)[1],S(0)[0],R",
       "Shard(dim=0)[1], Shard(dim=0)[0], Replicate()"},
      {"S(0),S(0),R", "S(0)[0],S(0)[1],R"},
      {"R,R,R", "Replicate(), Replicate(), Replicate()"},
      {"S(1),R,R", "S(-1),R,R"},
      {"R,S(1),R"},
      {"P(avg),R,R", "Partial(reduce_op=avg),R,R"},
      {"P(sum),R,R"},
  };
  const absl::Hash<DistState> hash{};
  absl::flat_hash_set<DistState> distinct;
  for (const std::vector<std::string>& row : spellings) {
    SCOPED_TRACE(row[0]);
    const DistState first = Parse(row[0], 3, 2).value();
    distinct.insert(first);
    for (const std::string& text : row) {
      absl::StatusOr<DistState> state = Parse(text, 3, 2);
      ASSERT_TRUE(state.ok()) << text << ": " << state.status();
      EXPECT_TRUE(*state == first) << text;
      EXPECT_EQ(hash(*state), hash(first)) << text;
      distinct.insert(*state);
    }
  }
  EXPECT_EQ(distinct.size(), spellings.size());
}

// Searches keep states as codes: unpacking one gives back the very state,
// on meshes of 1-8 dims and tensors of rank 1 up to the largest.
TEST(DistStateTest, UnpackInvertsPack) {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int ndim = 1; ndim <= kMaxMeshDims; ++ndim) {
    MeshSpec spec;
    for (int m = 0; m < ndim; ++m) {
      spec.shape.push_back(2);
      spec.dim_names.push_back(std::string(1, static_cast<char>('A' + m)));
    }
    const Mesh mesh = *Mesh::Create(spec);
    for (int rank : {1, 3, kMaxTensorRank}) {
      for (int i = 0; i < 40; ++i) {
        const DistState state = testing::RandomState(rng, mesh, rank);
        const DistState back = DistState::Unpack(state.Pack(), ndim);
        ASSERT_TRUE(back == state)
            << state.ToString() << " came back as " << back.ToString();
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, kMaxMeshDims * 3 * 40);
}

}  // namespace
}  // namespace reshard
