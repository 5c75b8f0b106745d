// agent/tensor_layout.h: a registration's layout is checked against its
// block when registered, and against what a run moves when bound; dim
// names are labels, the sizes, rank map, placements and global shape are
// the layout (docs/DESIGN.md §6.6).
#include "agent/tensor_layout.h"

#include "gtest/gtest.h"
#include "planner/core/state_text.h"

namespace reshard::agent {
namespace {

TensorLayout LayoutOf(std::vector<int64_t> global, std::vector<int64_t> sizes,
                      std::vector<int64_t> ranks, const char* placements,
                      std::vector<std::string> names = {}) {
  const int ndim = static_cast<int>(sizes.size());
  Mesh mesh = *Mesh::Create({std::move(sizes), std::move(names), ranks});
  DistState state = *ParseDistState(placements, ndim,
                                    static_cast<int>(global.size()), "state");
  return {std::move(global), std::move(mesh), std::move(state)};
}

TEST(TensorLayoutTest, TheRegisteredShapeMustBeTheRanksBlock) {
  const TensorLayout layout = LayoutOf({9, 4}, {2, 2}, {4, 5, 6, 7}, "S(0),R");
  EXPECT_TRUE(CheckLayoutBlock(layout, 6, {4, 4}).ok());  // rows 5..8
  EXPECT_TRUE(CheckLayoutBlock(layout, 4, {5, 4}).ok());  // rows 0..4
  absl::Status s = CheckLayoutBlock(layout, 6, {5, 4});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "layout: rank 6's block of [9, 4] as S(0),R on a mesh [2, 2] of "
            "ranks [4, 5, 6, 7] is [4, 4], not the registered shape [5, 4]");
  s = CheckLayoutBlock(layout, 1, {4, 4});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "layout.mesh: this agent's rank 1 is not in the mesh (ranks [4, "
            "5, 6, 7])");
}

TEST(TensorLayoutTest, NamesAreLabelsEverythingElseIsTheLayout) {
  const TensorLayout a = LayoutOf({8, 4}, {4}, {0, 1, 2, 3}, "S(1)", {"tp"});
  EXPECT_FALSE(
      LayoutDifference(a, LayoutOf({8, 4}, {4}, {0, 1, 2, 3}, "S(1)", {"x"}))
          .has_value());
  for (const TensorLayout& other :
       {LayoutOf({8, 4}, {4}, {0, 1, 3, 2}, "S(1)"),
        LayoutOf({8, 4}, {4}, {0, 1, 2, 3}, "S(0)"),
        LayoutOf({8, 5}, {4}, {0, 1, 2, 3}, "S(1)"),
        LayoutOf({8, 4}, {2, 2}, {0, 1, 2, 3}, "S(1),R")}) {
    const std::optional<std::string> why = LayoutDifference(a, other);
    ASSERT_TRUE(why.has_value()) << LayoutText(other);
    EXPECT_EQ(*why, "registered as " + LayoutText(a) +
                        "; the run moves it as " + LayoutText(other));
  }
}

}  // namespace
}  // namespace reshard::agent
