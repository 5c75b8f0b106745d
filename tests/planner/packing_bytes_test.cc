// PackedElements, the cost model's account of a collective's local copies,
// against the executors' own choice (step_memory.h's ChooseDirectPaths on
// the layout of the rank at position 0, the largest): on random meshes,
// uneven tensors, shard orders, and every collective edge the optimal
// search can take, both must name the same copies.
#include "planner/cost/packing_bytes.h"

#include <iostream>
#include <random>

#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/core/step_layout.h"
#include "planner/core/step_memory.h"
#include "planner/search/search_edges.h"
#include "tests/planner/random_cases.h"

namespace reshard {
namespace {

// The elements the executor packs and unpacks at position 0.
int64_t ExecutorPacked(const Mesh& mesh, const TensorSpec& tensor,
                       const Step& step) {
  const StepLayout layout = MakeStepLayout(mesh, tensor.shape(), step, 0);
  const DirectPaths direct = ChooseDirectPaths(step.op, layout);
  int64_t packed = 0;
  const bool sends_blocks =
      step.op == StepOp::kReduceScatter || step.op == StepOp::kAllToAll;
  const bool receives_blocks =
      step.op == StepOp::kAllGather || step.op == StepOp::kAllToAll;
  if (sends_blocks && !direct.send) packed += Numel(layout.in_shape);
  if (receives_blocks && !direct.recv) packed += Numel(layout.out_shape);
  return packed;
}

TEST(PackingBytesTest, AgreesWithTheExecutorsDirectPaths) {
  std::mt19937_64 rng(20261128);
  int checked = 0, packing = 0;
  for (int c = 0; c < testing::ScaledCases(400); ++c) {
    const testing::RandomCase rc = testing::MakeRandomCase(rng, 12);
    const std::vector<int64_t> extents =
        MaxLocalExtents(rc.mesh, rc.src, rc.tensor.shape());
    EdgeGenerator edges(rc.mesh, rc.src, rc.dst, rc.tensor.rank(),
                        FlattenPolicy::kAny, false);
    edges.Expand(rc.src, [&](const Transition& t, DistState& to) {
      if (!IsCollective(t.op) || rc.mesh.GroupSize(t.group) == 1) return;
      const absl::StatusOr<Step> step = MakeStep(rc.mesh, rc.src, to, t.group);
      ASSERT_TRUE(step.ok()) << step.status();
      const int64_t expected = ExecutorPacked(rc.mesh, rc.tensor, *step);
      EXPECT_EQ(PackedElements(rc.mesh, rc.src, step->transition(),
                               rc.tensor.shape(), extents),
                expected)
          << "case " << c << ": " << StepOpName(t.op);
      ++checked;
      packing += expected > 0;
    });
  }
  std::cout << checked << " collective edges, " << packing << " pack\n";
  // Both kinds occur often enough to mean something.
  EXPECT_GT(packing, checked / 10);
  EXPECT_LT(packing, checked * 9 / 10);
}

}  // namespace
}  // namespace reshard
