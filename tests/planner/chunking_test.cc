// Proves that chunking is torch.chunk (docs/DESIGN.md §2.2): the sizes and
// offsets of the docs/DESIGN.md §2.2 table (13/4 -> 4,4,4,1; 5/4 -> 2,2,1,0;
// 4/6 -> 1,1,1,1,0,0;
// ...), that for every extent 0..50 and 1..9 parts the parts are contiguous
// and sum to the extent, and that LocalBox applies nested splits in shard
// order (default ascending, or an explicit `[k]` order), tiling the tensor.
#include "planner/core/chunking.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "planner/core/dist_state.h"
#include "planner/core/local_layout.h"
#include "planner/core/mesh.h"
#include "planner/core/placement.h"
#include "planner/core/state_text.h"

namespace reshard {
namespace {

std::vector<int64_t> Sizes(int64_t extent, int64_t parts) {
  std::vector<int64_t> sizes;
  for (int64_t r = 0; r < parts; ++r) {
    sizes.push_back(ChunkSize(extent, parts, r));
  }
  return sizes;
}

std::vector<int64_t> Offsets(int64_t extent, int64_t parts) {
  std::vector<int64_t> offsets;
  for (int64_t r = 0; r < parts; ++r) {
    offsets.push_back(ChunkOffset(extent, parts, r));
  }
  return offsets;
}

struct ChunkCase {
  int64_t extent;
  int64_t parts;
  int64_t full;
  std::vector<int64_t> sizes;
  std::vector<int64_t> offsets;
};

TEST(ChunkingTest, DesignTable) {
  const std::vector<ChunkCase> cases = {
      {13, 4, 4, {4, 4, 4, 1}, {0, 4, 8, 12}},
      {5, 4, 2, {2, 2, 1, 0}, {0, 2, 4, 5}},
      {4, 6, 1, {1, 1, 1, 1, 0, 0}, {0, 1, 2, 3, 4, 4}},
      {12, 4, 3, {3, 3, 3, 3}, {0, 3, 6, 9}},
      {14, 4, 4, {4, 4, 4, 2}, {0, 4, 8, 12}},
      {9, 4, 3, {3, 3, 3, 0}, {0, 3, 6, 9}},
      {2, 4, 1, {1, 1, 0, 0}, {0, 1, 2, 2}},
      {0, 3, 0, {0, 0, 0}, {0, 0, 0}},
      {7, 1, 7, {7}, {0}},
  };
  for (const ChunkCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.extent, "/", c.parts));
    EXPECT_EQ(ChunkFull(c.extent, c.parts), c.full);
    EXPECT_EQ(Sizes(c.extent, c.parts), c.sizes);
    EXPECT_EQ(Offsets(c.extent, c.parts), c.offsets);
  }
}

TEST(ChunkingTest, PartsAreContiguousAndSumToExtent) {
  for (int64_t extent = 0; extent <= 50; ++extent) {
    for (int64_t parts = 1; parts <= 9; ++parts) {
      SCOPED_TRACE(absl::StrCat(extent, "/", parts));
      const int64_t full = ChunkFull(extent, parts);
      EXPECT_EQ(full, (extent + parts - 1) / parts);
      int64_t next_offset = 0;
      int64_t total = 0;
      int partial_parts = 0;
      for (int64_t r = 0; r < parts; ++r) {
        const int64_t size = ChunkSize(extent, parts, r);
        const int64_t offset = ChunkOffset(extent, parts, r);
        EXPECT_EQ(offset, next_offset) << "part " << r;
        EXPECT_GE(size, 0) << "part " << r;
        EXPECT_LE(size, full) << "part " << r;
        // torch.chunk: part r covers [r*full, min(L, (r+1)*full)).
        EXPECT_EQ(size, std::max<int64_t>(
                            0, std::min(extent, (r + 1) * full) - r * full))
            << "part " << r;
        if (r > 0) {
          EXPECT_LE(size, ChunkSize(extent, parts, r - 1)) << "part " << r;
        }
        partial_parts += size > 0 && size < full;
        next_offset = offset + size;
        total += size;
      }
      EXPECT_EQ(total, extent);
      EXPECT_EQ(next_offset, extent);
      EXPECT_LE(partial_parts, 1);
      // Part 0 is the largest: the padded block of a collective.
      EXPECT_EQ(ChunkSize(extent, parts, 0), std::min(extent, full));
    }
  }
}

Mesh MakeMesh(std::vector<int64_t> shape) {
  return Mesh::Create({.shape = std::move(shape)}).value();
}

DistState Parse(absl::string_view text, int mesh_ndim, int tensor_rank) {
  return ParseDistState(text, mesh_ndim, tensor_rank, "state").value();
}

// Offsets and extents of tensor dim `dim` at every position.
void DimBoxes(const Mesh& mesh, const DistState& state,
              const std::vector<int64_t>& shape, int dim,
              std::vector<int64_t>& offsets, std::vector<int64_t>& extents) {
  offsets.clear();
  extents.clear();
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    const Box box = LocalBox(mesh, state, shape, p);
    offsets.push_back(box.offset[dim]);
    extents.push_back(box.extent[dim]);
  }
}

TEST(LocalBoxTest, NestedShardingDefaultOrder) {
  const Mesh mesh = MakeMesh({2, 2});
  const DistState state = Parse("S(0),S(0)", 2, 2);
  std::vector<int64_t> offsets, extents;

  // 9 rows over mesh dim 0 -> [0,5) [5,9); then over mesh dim 1 ->
  // [0,3) [3,5) | [5,7) [7,9).
  DimBoxes(mesh, state, {9, 5}, 0, offsets, extents);
  EXPECT_EQ(extents, (std::vector<int64_t>{3, 2, 2, 2}));
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 3, 5, 7}));
  // The unsharded dim is whole everywhere.
  DimBoxes(mesh, state, {9, 5}, 1, offsets, extents);
  EXPECT_EQ(extents, (std::vector<int64_t>{5, 5, 5, 5}));
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 0, 0, 0}));

  // 5 rows -> [0,3) [3,5) -> [0,2) [2,3) | [3,4) [4,5).
  DimBoxes(mesh, state, {5, 3}, 0, offsets, extents);
  EXPECT_EQ(extents, (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 2, 3, 4}));

  const Box box = LocalBox(mesh, state, std::vector<int64_t>{9, 5}, 3);
  EXPECT_EQ(box, (Box{{7, 0}, {2, 5}}));
  EXPECT_EQ(box.numel(), 10);
}

TEST(LocalBoxTest, NestedShardingExplicitOrder) {
  const Mesh mesh = MakeMesh({2, 2});
  // Mesh dim 1 splits first, then mesh dim 0.
  const DistState state = Parse("S(0)[1],S(0)[0]", 2, 2);
  ASSERT_EQ(state.ShardOrder(0), (std::vector<int>{1, 0}));
  std::vector<int64_t> offsets, extents;

  // 9 rows over mesh dim 1 -> c1=0: [0,5), c1=1: [5,9); then over mesh dim
  // 0 -> [0,3) [3,5) and [5,7) [7,9). Position p = (c0, c1):
  // 0=(0,0) [0,3); 1=(0,1) [5,7); 2=(1,0) [3,5); 3=(1,1) [7,9).
  DimBoxes(mesh, state, {9, 5}, 0, offsets, extents);
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 5, 3, 7}));
  EXPECT_EQ(extents, (std::vector<int64_t>{3, 2, 2, 2}));

  // 5 rows -> c1: [0,3) [3,5) -> c0: [0,2) [2,3) | [3,4) [4,5).
  DimBoxes(mesh, state, {5, 3}, 0, offsets, extents);
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 3, 2, 4}));
  EXPECT_EQ(extents, (std::vector<int64_t>{2, 1, 1, 1}));
}

TEST(LocalBoxTest, DifferentTensorDimsAndNonShardPlacements) {
  const Mesh mesh = MakeMesh({2, 2, 3});
  // S(1) on mesh dim 0, R on mesh dim 1, S(0) on mesh dim 2; P never splits.
  for (absl::string_view text : {"S(1),R,S(0)", "S(1),P(sum),S(0)"}) {
    SCOPED_TRACE(text);
    const DistState state = Parse(text, 3, 2);
    const std::vector<int64_t> shape = {7, 5};
    for (int64_t p = 0; p < mesh.world_size(); ++p) {
      const int64_t c0 = mesh.Coordinate(p, 0);
      const int64_t c2 = mesh.Coordinate(p, 2);
      const Box box = LocalBox(mesh, state, shape, p);
      EXPECT_EQ(box.offset[0], ChunkOffset(7, 3, c2)) << "position " << p;
      EXPECT_EQ(box.extent[0], ChunkSize(7, 3, c2)) << "position " << p;
      EXPECT_EQ(box.offset[1], ChunkOffset(5, 2, c0)) << "position " << p;
      EXPECT_EQ(box.extent[1], ChunkSize(5, 2, c0)) << "position " << p;
    }
    EXPECT_EQ(MaxLocalExtents(mesh, state, shape),
              (std::vector<int64_t>{3, 3}));
  }
}

// Every order of S(0) over all dims of a mesh: the non-empty local pieces of
// a 1-D tensor are disjoint and tile [0, L), and MaxLocalExtents is the
// largest local extent.
TEST(LocalBoxTest, EveryShardOrderTilesTheTensor) {
  for (const std::vector<int64_t>& mesh_shape :
       std::vector<std::vector<int64_t>>{{2, 3, 2}, {3, 1, 4}, {4, 3}}) {
    const Mesh mesh = MakeMesh(mesh_shape);
    std::vector<int> order(mesh.ndim());
    std::iota(order.begin(), order.end(), 0);
    do {
      const std::vector<Placement> placements(mesh.ndim(), Placement::Shard(0));
      absl::StatusOr<DistState> state =
          DistState::Create(placements, {{0, order}}, 1, "state");
      ASSERT_TRUE(state.ok()) << state.status();
      ASSERT_EQ(state->ShardOrder(0), order);
      for (int64_t extent = 1; extent <= 30; ++extent) {
        SCOPED_TRACE(absl::StrCat("mesh [", absl::StrJoin(mesh_shape, ","),
                                  "] order (", absl::StrJoin(order, ","),
                                  ") extent ", extent));
        std::vector<std::pair<int64_t, int64_t>> pieces;  // offset, extent
        int64_t largest = 0;
        for (int64_t p = 0; p < mesh.world_size(); ++p) {
          const Box box =
              LocalBox(mesh, *state, std::vector<int64_t>{extent}, p);
          largest = std::max(largest, box.extent[0]);
          if (box.extent[0] > 0) {
            pieces.emplace_back(box.offset[0], box.extent[0]);
          }
        }
        std::sort(pieces.begin(), pieces.end());
        int64_t next = 0;
        for (const auto& [offset, size] : pieces) {
          EXPECT_EQ(offset, next);
          next = offset + size;
        }
        EXPECT_EQ(next, extent);
        EXPECT_EQ(MaxLocalExtents(mesh, *state, std::vector<int64_t>{extent}),
                  (std::vector<int64_t>{largest}));
      }
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

}  // namespace
}  // namespace reshard
