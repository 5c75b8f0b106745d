// StepLayout against brute force: on random meshes, states and legal steps
// (multi-dim groups in any dim order, uneven shapes), every box a rank sends
// or receives is, in global coordinates, the intersection of the sender's
// source box and the receiver's destination box; every member of a group
// agrees on the padded block, which is the largest block the group moves;
// and the cost model's block (from MaxLocalExtents) is the largest over all
// ranks.
#include "planner/core/step_layout.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "planner/search/search_edges.h"
#include "tests/planner/random_cases.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

// `local` (coordinates inside a rank's tensor whose box starts at `origin`)
// in global coordinates.
Box Global(const Box& local, const Box& origin) {
  Box out = local;
  for (size_t d = 0; d < out.offset.size(); ++d)
    out.offset[d] += origin.offset[d];
  return out;
}

Box Intersect(const Box& a, const Box& b) {
  Box out = a;
  for (size_t d = 0; d < a.offset.size(); ++d) {
    const int64_t lo = std::max(a.offset[d], b.offset[d]);
    const int64_t hi =
        std::min(a.offset[d] + a.extent[d], b.offset[d] + b.extent[d]);
    out.offset[d] = lo;
    out.extent[d] = std::max<int64_t>(0, hi - lo);
  }
  return out;
}

// Boxes equal as sets of elements (offsets of empty boxes do not matter).
bool SameElements(const Box& a, const Box& b) {
  if (a.numel() == 0 || b.numel() == 0) return a.numel() == b.numel();
  return a == b;
}

std::string Describe(const Box& b) {
  return absl::StrCat("@[", absl::StrJoin(b.offset, ","), "]x[",
                      absl::StrJoin(b.extent, ","), "]");
}

Box Whole(const std::vector<int64_t>& shape) {
  return Box{std::vector<int64_t>(shape.size(), 0), shape};
}

struct Checker {
  const Mesh& mesh;
  absl::Span<const int64_t> shape;
  const Step& step;

  Box From(int64_t q) const { return LocalBox(mesh, step.from, shape, q); }
  Box To(int64_t q) const { return LocalBox(mesh, step.to, shape, q); }

  // Every rank's layout; returns the elementwise max of its blocks.
  void CheckRank(int64_t p, const StepLayout& l) const {
    SCOPED_TRACE(absl::StrCat("position ", p));
    const std::vector<int64_t> members = mesh.GroupPositions(p, step.group);
    const int64_t n = static_cast<int64_t>(members.size());
    ASSERT_EQ(l.in_shape, From(p).extent);
    ASSERT_EQ(l.out_shape, To(p).extent);
    ASSERT_EQ(l.group_size, n);
    ASSERT_EQ(members[l.index], p);
    if (!IsCollective(step.op)) return CheckLocal(p, l);
    const bool one_send =
        step.op == StepOp::kAllGather || step.op == StepOp::kAllReduce;
    const bool one_recv =
        step.op == StepOp::kAllReduce || step.op == StepOp::kReduceScatter;
    ASSERT_EQ(l.send.size(), one_send ? 1u : static_cast<size_t>(n));
    ASSERT_EQ(l.recv.size(), one_recv ? 1u : static_cast<size_t>(n));
    for (size_t j = 0; j < l.send.size(); ++j) {
      const Box want = one_send ? From(p) : Intersect(From(p), To(members[j]));
      EXPECT_TRUE(SameElements(Global(l.send[j], From(p)), want))
          << "send[" << j << "] " << Describe(Global(l.send[j], From(p)))
          << " want " << Describe(want);
    }
    for (size_t i = 0; i < l.recv.size(); ++i) {
      const Box want = one_recv ? To(p) : Intersect(From(members[i]), To(p));
      EXPECT_TRUE(SameElements(Global(l.recv[i], To(p)), want))
          << "recv[" << i << "] " << Describe(Global(l.recv[i], To(p)))
          << " want " << Describe(want);
    }
  }

  void CheckLocal(int64_t p, const StepLayout& l) const {
    const bool zeros = step.op == StepOp::kPartition &&
                       step.reduce_op == ReduceOp::kSum && l.index != 0;
    if (zeros) {
      EXPECT_TRUE(l.send.empty() && l.recv.empty());
      return;
    }
    ASSERT_EQ(l.send.size(), 1u);
    ASSERT_EQ(l.recv.size(), 1u);
    // The copied box holds the same global elements on both sides, and the
    // destination box holds exactly the part of the source it keeps.
    const Box sent = Global(l.send[0], From(p));
    const Box landed = Global(l.recv[0], To(p));
    EXPECT_TRUE(SameElements(sent, landed))
        << Describe(sent) << " vs " << Describe(landed);
    EXPECT_TRUE(SameElements(sent, Intersect(From(p), To(p))));
    if (step.op != StepOp::kShardToPartial) {
      EXPECT_EQ(l.recv[0], Whole(l.out_shape));
    }
  }

  // Members agree on the block, and it is the largest box the group moves.
  void CheckGroupBlock(const std::vector<StepLayout>& layouts,
                       int64_t p) const {
    const std::vector<int64_t> members = mesh.GroupPositions(p, step.group);
    std::vector<int64_t> largest(shape.size(), 0);
    for (int64_t q : members) {
      EXPECT_EQ(layouts[q].block_shape, layouts[p].block_shape);
      for (const auto* boxes : {&layouts[q].send, &layouts[q].recv}) {
        for (const Box& b : *boxes) {
          if (step.op == StepOp::kAllToAll || b.numel() > 0) {
            for (size_t d = 0; d < shape.size(); ++d)
              largest[d] = std::max(largest[d], b.extent[d]);
          }
        }
      }
    }
    if (step.op == StepOp::kAllToAll) {
      // Blocks are padded along both moved dims to the largest member's.
      EXPECT_EQ(layouts[p].block_shape, largest);
    } else {
      for (size_t d = 0; d < shape.size(); ++d)
        EXPECT_GE(layouts[p].block_shape[d], largest[d]);
      int64_t largest_numel = 1;
      for (int64_t e : largest) largest_numel *= e;
      if (largest_numel > 0) {
        EXPECT_EQ(layouts[p].block_shape, largest);
      }
    }
  }
};

void CheckStep(const Mesh& mesh, absl::Span<const int64_t> shape,
               const Step& step) {
  SCOPED_TRACE(absl::StrCat(StepOpName(step.op), "(",
                            mesh.GroupName(step.group), ") ",
                            step.from.ToString(), " -> ", step.to.ToString(),
                            " shape [", absl::StrJoin(shape, ","), "]"));
  const Checker checker{mesh, shape, step};
  std::vector<StepLayout> layouts;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    layouts.push_back(MakeStepLayout(mesh, shape, step, p));
    checker.CheckRank(p, layouts.back());
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (!IsCollective(step.op)) return;
  std::vector<int64_t> largest(shape.size(), 0);
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    checker.CheckGroupBlock(layouts, p);
    for (size_t d = 0; d < shape.size(); ++d)
      largest[d] = std::max(largest[d], layouts[p].block_shape[d]);
  }
  // The cost model's block: the largest over all ranks.
  const std::vector<int64_t> max_extents =
      MaxLocalExtents(mesh, step.from, shape);
  EXPECT_EQ(PaddedBlockShape(mesh, step.transition(), max_extents), largest);
  int64_t numel = 1;
  for (int64_t e : largest) numel *= e;
  EXPECT_EQ(PaddedBlockNumel(mesh, step.transition(), max_extents), numel);
}

TEST(StepLayoutTest, MatchesBruteForceOnRandomSteps) {
  std::mt19937_64 rng(20261123);
  const int cases = testing::ScaledCases(10000);
  int checked = 0;
  for (int i = 0; i < cases; ++i) {
    const testing::RandomCase c = testing::MakeRandomCase(rng);
    std::vector<Step> steps;
    // Every other case folds size-1 dims into collectives (the torch
    // model's edges).
    EdgeGenerator edges(c.mesh, c.src, c.dst, c.tensor.rank(),
                        FlattenPolicy::kAny, i % 2 == 1);
    edges.Expand(c.src, [&](const Transition& t, DistState& to) {
      absl::StatusOr<Step> step = MakeStep(c.mesh, c.src, to, t.group);
      ASSERT_TRUE(step.ok()) << step.status();
      steps.push_back(*step);
    });
    if (steps.empty()) continue;
    // A few random edges per case keep the run short.
    for (int k = 0; k < 3; ++k) {
      CheckStep(c.mesh, c.tensor.shape(), steps[rng() % steps.size()]);
      ++checked;
      if (HasFailure()) FAIL() << "case " << i;
    }
  }
  EXPECT_GE(checked, cases);
}

TEST(StepLayoutTest, UnevenAllGatherOverAFlattenedGroupInReverseOrder) {
  // 13 rows over (B, A) on a 2x2 mesh: B splits first (7, 6), then A
  // (4,3 and 3,3). Position 0 = (a0, b0) holds rows [0,4).
  const Mesh mesh = testing::MakeMesh({2, 2}, {{"B", "A"}});
  const DistState from = *DistState::Create(
      {Placement::Shard(0), Placement::Shard(0)}, {{0, {1, 0}}}, 1, "from");
  const Step step =
      *MakeStep(mesh, from, DistState::Replicated(2), Group{1, 0});
  const StepLayout l = MakeStepLayout(mesh, {13}, step, 0);
  EXPECT_EQ(l.block_shape, std::vector<int64_t>{4});
  ASSERT_EQ(l.recv.size(), 4u);
  // Members in (B, A) order: positions 0, 2, 1, 3 hold 4, 3, 3, 3 rows.
  EXPECT_EQ(l.recv[1], (Box{{4}, {3}}));
  EXPECT_EQ(l.recv[3], (Box{{10}, {3}}));
  EXPECT_EQ(l.BlockNumel(), 4);
}

TEST(StepLayoutTest, WireBlocksPerOp) {
  EXPECT_EQ(CollectiveWireBlocks(StepOp::kAllGather, 4).out, 4);
  EXPECT_EQ(CollectiveWireBlocks(StepOp::kAllGather, 4).in, 1);
  EXPECT_EQ(CollectiveWireBlocks(StepOp::kReduceScatter, 4).in, 4);
  EXPECT_EQ(CollectiveWireBlocks(StepOp::kAllToAll, 3).in, 3);
  EXPECT_EQ(CollectiveWireBlocks(StepOp::kAllReduce, 8).out, 1);
}

}  // namespace
}  // namespace reshard
