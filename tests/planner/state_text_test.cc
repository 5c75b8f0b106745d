// Proves that ParseDistState accepts every text form of docs/DESIGN.md §2.2 —
// list form `S(0),R,P(sum)`, PyTorch's concatenated form `S(0)RP(sum)`, PyTorch
// reprs with or without brackets, bare `P`, `reduce_op=`, negative shard
// dims, `[k]` order suffixes — and that DistState prints as stated:
// ToString()/ToTorchString() round-trip and `[k]` suffixes appear exactly
// for tensor dims sharded by >= 2 mesh dims. DistState's own behaviour is
// tested in dist_state_test.cc, Placement's in placement_test.cc.
#include "planner/core/state_text.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/placement.h"

namespace reshard {
namespace {

absl::StatusOr<DistState> Parse(absl::string_view text, int mesh_ndim,
                                int tensor_rank) {
  return ParseDistState(text, mesh_ndim, tensor_rank, "src");
}

struct TextCase {
  std::string text;
  int mesh_ndim;
  int tensor_rank;
  std::string want;  // the expected printed form of the parsed state.
};

// Parses every case, checks its list form, and that the list form parses
// back to the same state (the torch form is checked by TorchFormRoundTrips).
void CheckCases(const std::vector<TextCase>& cases) {
  for (const TextCase& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<DistState> state = Parse(c.text, c.mesh_ndim, c.tensor_rank);
    EXPECT_TRUE(state.ok()) << state.status();
    if (!state.ok()) continue;
    EXPECT_EQ(state->mesh_ndim(), c.mesh_ndim);
    EXPECT_EQ(state->ToString(), c.want);

    absl::StatusOr<DistState> list =
        Parse(state->ToString(), c.mesh_ndim, c.tensor_rank);
    EXPECT_TRUE(list.ok()) << list.status();
    if (list.ok()) {
      EXPECT_TRUE(*list == *state) << list->ToString();
    }
  }
}

TEST(StateTextTest, ParsesListFormAndReprs) {
  CheckCases({
      {"S(0),R,P(sum)", 3, 2, "S(0),R,P(sum)"},
      {"  S(0) , R ,P(sum) ", 3, 2, "S(0),R,P(sum)"},
      {"S(0) R P(sum)", 3, 2, "S(0),R,P(sum)"},
      {"Shard(dim=0), Replicate(), Partial(sum)", 3, 2, "S(0),R,P(sum)"},
      {"Shard(dim=0)Replicate()Partial(sum)", 3, 2, "S(0),R,P(sum)"},
      {"[Shard(dim=0), Replicate()]", 2, 2, "S(0),R"},
      {"(Shard(dim=1), Replicate())", 2, 2, "S(1),R"},
      {"[S(1), P(avg)]", 2, 2, "S(1),P(avg)"},
      {"R", 1, 1, "R"},
      {"S(0)R", 2, 1, "S(0),R"},
      {"Replicate()Replicate()", 2, 1, "R,R"},
  });
}

TEST(StateTextTest, ParsesPartialForms) {
  CheckCases({
      {"P", 1, 1, "P(sum)"},
      {"P,R", 2, 1, "P(sum),R"},
      {"Partial()", 1, 1, "P(sum)"},
      {"Partial(sum)", 1, 1, "P(sum)"},
      {"Partial(reduce_op=avg)", 1, 1, "P(avg)"},
      {"Partial(reduce_op='max')", 1, 1, "P(max)"},
      {"P(min),R", 2, 1, "P(min),R"},
      // {sum, avg} is the one mix of Partial ops that is allowed.
      {"P(sum),P(avg)", 2, 1, "P(sum),P(avg)"},
  });
}

// PyTorch's repr with the enum (`Partial(reduce_op=ReduceOp.SUM)`) and the
// enum's other spellings name the op in capitals, behind its class.
TEST(StateTextTest, ParsesPartialWithTorchReduceOpEnum) {
  CheckCases({
      {"Partial(reduce_op=ReduceOp.SUM)", 1, 1, "P(sum)"},
      {"[Shard(dim=0), Partial(reduce_op=ReduceOp.AVG)]", 2, 1, "S(0),P(avg)"},
      {"Partial(reduce_op=dist.ReduceOp.MAX)", 1, 1, "P(max)"},
      {"Partial(reduce_op=ReduceOp.RedOpType.MIN)", 1, 1, "P(min)"},
      {"Partial(reduce_op=<RedOpType.SUM: 0>)", 1, 1, "P(sum)"},
      {"P(ReduceOp.AVG)", 1, 1, "P(avg)"},
  });
  absl::StatusOr<DistState> product =
      Parse("Partial(reduce_op=ReduceOp.PRODUCT)", 1, 1);
  EXPECT_EQ(product.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(product.status().message(),
            "src[0]: unknown reduce op \"reduce_op=ReduceOp.PRODUCT\"; "
            "expected sum, avg, max or min");
  // Capitals belong to the enum form only.
  EXPECT_FALSE(Parse("Partial(SUM)", 1, 1).ok());
}

TEST(StateTextTest, NormalizesNegativeShardDims) {
  CheckCases({
      {"S(-1),R", 2, 3, "S(2),R"},
      {"Shard(dim=-3)", 1, 3, "S(0)"},
      {"S(-1)[1]S(-1)[0]", 2, 2, "S(1)[1],S(1)[0]"},
  });
  absl::StatusOr<DistState> negative = Parse("S(-1),R", 2, 3);
  absl::StatusOr<DistState> positive = Parse("S(2),R", 2, 3);
  ASSERT_TRUE(negative.ok() && positive.ok());
  EXPECT_TRUE(*negative == *positive);
  EXPECT_EQ(negative->placement(0), Placement::Shard(2));
}

TEST(StateTextTest, ParsesOrderSuffixes) {
  CheckCases({
      {"S(0)[1]S(0)[0]R", 3, 2, "S(0)[1],S(0)[0],R"},
      {"S(0)[1],S(0)[0],R", 3, 2, "S(0)[1],S(0)[0],R"},
      {"Shard(dim=0)[1], Shard(dim=0)[0], Replicate()", 3, 2,
       "S(0)[1],S(0)[0],R"},
      {"S(1)[2],S(0),S(1)[0],S(1)[1]", 4, 2, "S(1)[2],S(0),S(1)[0],S(1)[1]"},
      // A suffix on a tensor dim sharded by one mesh dim is accepted and not
      // printed.
      {"S(0)[0]", 1, 1, "S(0)"},
  });

  absl::StatusOr<DistState> state = Parse("S(0)[1]S(0)[0]R", 3, 2);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->ShardOrder(0), (std::vector<int>{1, 0}));
  EXPECT_EQ(state->ShardOrder(1), (std::vector<int>{}));
  EXPECT_EQ(state->ShardDepth(0), 2);
  EXPECT_EQ(state->order_index(0), 1);
  EXPECT_EQ(state->order_index(1), 0);
  EXPECT_EQ(state->ShardOrderEntries(),
            (std::vector<ShardOrderEntry>{{0, {1, 0}}}));

  state = Parse("S(1)[2],S(0),S(1)[0],S(1)[1]", 4, 2);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->ShardOrder(1), (std::vector<int>{2, 3, 0}));
  EXPECT_EQ(state->ShardOrder(0), (std::vector<int>{1}));
  EXPECT_EQ(state->ShardOrderEntries(),
            (std::vector<ShardOrderEntry>{{0, {1}}, {1, {2, 3, 0}}}));

  // Without suffixes the order is ascending.
  state = Parse("S(0),S(0),S(0)", 3, 1);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->ShardOrder(0), (std::vector<int>{0, 1, 2}));
}

// PyTorch's concatenated form puts single-letter placements (`R`, bare `P`)
// directly before the next placement: `S(0)RP(sum)`, `RRR` (docs/DESIGN.md
// §2.2, and the trace example `P(sum)RP(sum)-->RRR`).
TEST(StateTextTest, ParsesConcatenatedSingleLetterPlacements) {
  CheckCases({
      {"S(0)RP(sum)", 3, 2, "S(0),R,P(sum)"},
      {"P(sum)RP(sum)", 3, 1, "P(sum),R,P(sum)"},
      {"RRR", 3, 1, "R,R,R"},
      {"RS(0)", 2, 1, "R,S(0)"},
      {"PR", 2, 1, "P(sum),R"},
      {"S(0)[1]S(0)[0]RR", 4, 2, "S(0)[1],S(0)[0],R,R"},
  });
}

// Every state printed with ToTorchString() parses back to itself.
TEST(StateTextTest, TorchFormRoundTrips) {
  const std::vector<TextCase> cases = {
      {"S(0),R,P(sum)", 3, 2, "S(0)RP(sum)"},
      {"P(sum),R,P(sum)", 3, 1, "P(sum)RP(sum)"},
      {"R,R,R", 3, 1, "RRR"},
      {"S(0)[1],S(0)[0],R", 3, 2, "S(0)[1]S(0)[0]R"},
      {"S(0),S(0)", 2, 1, "S(0)[0]S(0)[1]"},
      {"S(1),P(avg),S(0),R", 4, 2, "S(1)P(avg)S(0)R"},
      {"R,S(1)[2],S(0),S(1)[0],S(1)[1]", 5, 2, "RS(1)[2]S(0)S(1)[0]S(1)[1]"},
      {"P(max),R,P(max)", 3, 2, "P(max)RP(max)"},
  };
  for (const TextCase& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<DistState> state = Parse(c.text, c.mesh_ndim, c.tensor_rank);
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_EQ(state->ToTorchString(), c.want);
    absl::StatusOr<DistState> torch =
        Parse(state->ToTorchString(), c.mesh_ndim, c.tensor_rank);
    EXPECT_TRUE(torch.ok()) << state->ToTorchString() << ": " << torch.status();
    if (torch.ok()) {
      EXPECT_TRUE(*torch == *state) << torch->ToString();
    }
  }
}

TEST(StateTextTest, PrintsListAndTorchForms) {
  struct PrintCase {
    std::string text;
    int mesh_ndim;
    std::string list;
    std::string torch;
  };
  const std::vector<PrintCase> cases = {
      {"S(0)[1]S(0)[0]R", 3, "S(0)[1],S(0)[0],R", "S(0)[1]S(0)[0]R"},
      {"P(sum),R,P(sum)", 3, "P(sum),R,P(sum)", "P(sum)RP(sum)"},
      {"S(0),S(1)", 2, "S(0),S(1)", "S(0)S(1)"},
      // docs/DESIGN.md §2.2 / PyTorch format_shard_order_str: the suffix is
      // printed whenever a tensor dim is sharded by >= 2 mesh dims, also when
      // the order is the default ascending one.
      {"S(0),S(0)", 2, "S(0)[0],S(0)[1]", "S(0)[0]S(0)[1]"},
      {"S(0),S(1),S(0)", 3, "S(0)[0],S(1),S(0)[1]", "S(0)[0]S(1)S(0)[1]"},
      {"R,P(avg),P(sum)", 3, "R,P(avg),P(sum)", "RP(avg)P(sum)"},
  };
  for (const PrintCase& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<DistState> state = Parse(c.text, c.mesh_ndim, 2);
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_EQ(state->ToString(), c.list);
    EXPECT_EQ(state->ToTorchString(), c.torch);
  }
  EXPECT_EQ(DistState::Replicated(3).ToString(), "R,R,R");
  EXPECT_EQ(DistState::Replicated(3).ToTorchString(), "RRR");
}

TEST(StateTextTest, ReprsOfPlacementsParseBack) {
  for (absl::string_view text :
       {"S(0),R,P(sum)", "S(1),P(avg),S(0)", "P(max),R,P(max)", "R,R,S(1)"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<DistState> state = Parse(text, 3, 2);
    ASSERT_TRUE(state.ok()) << state.status();
    std::vector<std::string> reprs;
    for (const Placement& p : state->placements()) reprs.push_back(p.ToRepr());
    const std::string repr = absl::StrCat("[", absl::StrJoin(reprs, ", "), "]");
    absl::StatusOr<DistState> parsed = Parse(repr, 3, 2);
    ASSERT_TRUE(parsed.ok()) << repr << ": " << parsed.status();
    EXPECT_TRUE(*parsed == *state) << repr;
  }
}

}  // namespace
}  // namespace reshard
