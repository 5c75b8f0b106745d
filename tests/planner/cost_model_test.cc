// The cost formulas of docs/DESIGN.md §3.1 and §3.3 against values computed by
// hand (padded buffers on uneven shapes, ring factors, links, local copies).
#include "planner/cost/cost_model.h"

#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/core/state_text.h"
#include "planner/cost/collective_factors.h"
#include "planner/cost/packing_bytes.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

DistState State(const Mesh& mesh, int rank, const char* text) {
  return *ParseDistState(text, mesh.ndim(), rank, "state");
}

StepCost PriceOf(const Mesh& mesh, std::vector<int64_t> shape, DType dtype,
                 const char* from, const char* to, Group group,
                 CostModelKind kind = CostModelKind::kAlphaBeta) {
  const TensorSpec tensor = *TensorSpec::Create(shape, dtype);
  const DistState a = State(mesh, tensor.rank(), from);
  const DistState b = State(mesh, tensor.rank(), to);
  const Step step = *MakeStep(mesh, a, b, group);
  return CostModel(mesh, tensor, {kind, 8}).Price(a, step.transition());
}

TEST(CollectiveFactorsTest, RingHopsAndBusBandwidth) {
  EXPECT_EQ(RingHops(StepOp::kAllGather, 4), 3);
  EXPECT_EQ(RingHops(StepOp::kAllReduce, 4), 6);
  EXPECT_EQ(RingHops(StepOp::kChunk, 4), 0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(StepOp::kReduceScatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(StepOp::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(StepOp::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(StepOp::kAllGather, 1), 0.0);
}

TEST(CollectiveFactorsTest, AllToAllTakesOneLatencyRound) {
  EXPECT_EQ(LatencyRounds(StepOp::kAllToAll, 8), 1);
  EXPECT_EQ(LatencyRounds(StepOp::kAllToAll, 1), 0);
  EXPECT_EQ(LatencyRounds(StepOp::kAllGather, 8), 7);
  EXPECT_EQ(LatencyRounds(StepOp::kAllReduce, 8), 14);
  EXPECT_DOUBLE_EQ(
      AlphaBetaCollectiveUs(StepOp::kAllToAll, 8, 8000, 6.6, 2.0, 1.0),
      6.6 + 2.0 + 7.0 / 8 * 8000 / 1e9 * 1e6);
}

TEST(CollectiveFactorsTest, AllToAllBytesCrossEachDimsLink) {
  // One dim, or dims on one link: the ring's (n-1)/n at that bandwidth.
  EXPECT_DOUBLE_EQ(AllToAllUsPerByte({{8, 2.0}}), 7.0 / 8 / 2e9 * 1e6);
  EXPECT_NEAR(AllToAllUsPerByte({{2, 2.0}, {4, 2.0}}), 7.0 / 8 / 2e9 * 1e6,
              1e-18);
  // Hosts (2, slow) x 4 within: half the buffer goes to the other host,
  // 3/8 to this host's others; the order the dims come in does not matter.
  const double two_tier = 0.5 / 0.025e9 * 1e6 + 3.0 / 8 / 0.5e9 * 1e6;
  EXPECT_DOUBLE_EQ(AllToAllUsPerByte({{2, 0.025}, {4, 0.5}}), two_tier);
  EXPECT_DOUBLE_EQ(AllToAllUsPerByte({{4, 0.5}, {2, 0.025}}), two_tier);
}

TEST(CostModelTest, MergedAllReduceOfTheReadmeExample) {
  // docs/DESIGN.md §4: 16x16 f32 all_reduce over (A,C), n = 4: 6.6 + 6*0.6 +
  // 1.5 * 1024 B / 87.7 GB/s.
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  const StepCost c = PriceOf(mesh, {16, 16}, DType::kFloat32, "P(sum),R,P(sum)",
                             "R,R,R", {0, 2});
  EXPECT_EQ(c.bytes, 1024);
  EXPECT_EQ(c.peak_bytes, 2048);
  EXPECT_DOUBLE_EQ(c.time_us, 6.6 + 6 * 0.6 + 1.5 * 1024 / 87.7e9 * 1e6);
}

TEST(CostModelTest, UnevenReduceScatterPadsToTheLargestBlock) {
  // 13x3 f32 over 4 ranks: blocks of ceil(13/4) = 4 rows, 48 bytes; the
  // input is 4 blocks.
  const Mesh mesh = MakeMesh({4});
  const StepCost c =
      PriceOf(mesh, {13, 3}, DType::kFloat32, "P(sum)", "S(0)", {0});
  EXPECT_EQ(c.bytes, 192);
  EXPECT_EQ(c.peak_bytes, 192 + 48);
  const double ring = 6.6 + 3 * 0.6 + 0.75 * 192 / 87.7e9 * 1e6;
  EXPECT_DOUBLE_EQ(c.time_us, ring);
  // The rows do not split evenly, so the 156 input bytes are packed into
  // the padded blocks first: priced on a mesh with a copy rate.
  const Mesh copying = *Mesh::Create({.shape = {4}, .copy_gbps = 0.5});
  EXPECT_DOUBLE_EQ(
      PriceOf(copying, {13, 3}, DType::kFloat32, "P(sum)", "S(0)", {0}).time_us,
      ring + 156 / 0.5e9 * 1e6);
}

// A gather along dim 1 of a tensor with rows receives blocks that are not
// runs of its output: it unpacks them, at the mesh's copy rate; along dim
// 0 it receives in place. The same bytes, otherwise the same price.
// A measured base latency replaces kBaseLatencyUs in every collective's
// price, all_to_all and the search's bound included; the torch model keeps
// PyTorch's.
TEST(CostModelTest, AMeasuredBaseLatencyIsEveryCollectivesFixedCost) {
  const Mesh based = *Mesh::Create({.shape = {4}, .base_us = 4000});
  const Mesh plain = MakeMesh({4});
  const TensorSpec tensor = *TensorSpec::Create({64, 64}, DType::kFloat32);
  const CostModel with(based, tensor, {});
  const CostModel without(plain, tensor, {});
  for (StepOp op : {StepOp::kAllGather, StepOp::kReduceScatter,
                    StepOp::kAllReduce, StepOp::kAllToAll}) {
    EXPECT_DOUBLE_EQ(with.CollectiveTime(op, {0}, 16384) -
                         without.CollectiveTime(op, {0}, 16384),
                     4000 - kBaseLatencyUs)
        << StepOpName(op);
  }
  EXPECT_EQ(with.LowerBound({0}).base_us, 4000);
  EXPECT_EQ(with.LowerBound({0}).all_to_all_us,
            without.LowerBound({0}).all_to_all_us + 4000 - kBaseLatencyUs);
  EXPECT_DOUBLE_EQ(
      PriceOf(based, {64, 64}, DType::kFloat32, "S(0)", "R", {0}).time_us,
      4000 + 3 * 0.6 + 0.75 * 16384 / 87.7e9 * 1e6);
  EXPECT_EQ(PriceOf(based, {64, 64}, DType::kFloat32, "S(0)", "R", {0},
                    CostModelKind::kTorch)
                .time_us,
            PriceOf(plain, {64, 64}, DType::kFloat32, "S(0)", "R", {0},
                    CostModelKind::kTorch)
                .time_us);
}

// A measured all_to_all latency replaces the one hop an all_to_all pays: a
// dim's on its own group, a registered group's on its dim set (the lowest
// where two orders have one), the slowest dim's elsewhere; rings and the
// torch model ignore it, and the bound is the price.
TEST(CostModelTest, AMeasuredAllToAllLatencyIsItsGroups) {
  MeshSpec spec{.shape = {2, 4, 2},
                .dim_names = {"A", "B", "C"},
                .flattened = {{"A", "B"}, {"B", "A"}}};
  spec.links = {LinkParams{10, 50, 900}, LinkParams{100, 5, 3800},
                LinkParams{100, 5}};
  spec.flattened_links = {LinkParams{.all_to_all_us = 3100},
                          LinkParams{.all_to_all_us = 2500}};
  const Mesh mesh = *Mesh::Create(spec);
  spec.links = {LinkParams{10, 50}, LinkParams{100, 5}, LinkParams{100, 5}};
  spec.flattened_links.clear();
  const Mesh hops = *Mesh::Create(spec);
  const TensorSpec tensor = *TensorSpec::Create({64, 64}, DType::kFloat32);
  const CostModel with(mesh, tensor, {});
  const CostModel without(hops, tensor, {});
  auto extra = [&](const Group& g, StepOp op) {
    return with.CollectiveTime(op, g, 16384) -
           without.CollectiveTime(op, g, 16384);
  };
  EXPECT_DOUBLE_EQ(extra({0}, StepOp::kAllToAll), 900 - 50);
  EXPECT_DOUBLE_EQ(extra({1}, StepOp::kAllToAll), 3800 - 5);
  EXPECT_DOUBLE_EQ(extra({2}, StepOp::kAllToAll), 0);
  EXPECT_DOUBLE_EQ(extra({0, 1}, StepOp::kAllToAll), 2500 - 50);
  EXPECT_DOUBLE_EQ(extra({1, 0}, StepOp::kAllToAll), 2500 - 50);
  EXPECT_DOUBLE_EQ(extra({1, 2}, StepOp::kAllToAll), 3800 - 5);
  EXPECT_DOUBLE_EQ(extra({0, 1}, StepOp::kAllGather), 0);
  EXPECT_DOUBLE_EQ(extra({1}, StepOp::kReduceScatter), 0);
  for (const Group& g : {Group{0}, Group{0, 1}, Group{1, 2}}) {
    EXPECT_DOUBLE_EQ(with.LowerBound(g).all_to_all_us,
                     with.CollectiveTime(StepOp::kAllToAll, g, 0));
  }
  const CostModel torch_with(mesh, tensor, {.kind = CostModelKind::kTorch});
  const CostModel torch_without(hops, tensor, {.kind = CostModelKind::kTorch});
  EXPECT_EQ(torch_with.LowerBound({1}).all_to_all_us,
            torch_without.LowerBound({1}).all_to_all_us);
}

// A measured reduction rate prices (n-1)/n of a reduce_scatter's and an
// all_reduce's buffer per rank at it, and nothing else: not the other
// collectives, not the search's bound (which stays below every price), not
// the torch model.
TEST(CostModelTest, AReductionRatePricesWhatRingsReduce) {
  const Mesh reducing = *Mesh::Create({.shape = {4}, .reduce_gbps = 0.5});
  const Mesh plain = MakeMesh({4});
  const TensorSpec tensor = *TensorSpec::Create({64, 64}, DType::kFloat32);
  const CostModel with(reducing, tensor, {});
  const CostModel without(plain, tensor, {});
  const int64_t bytes = 16384;
  for (StepOp op : {StepOp::kAllGather, StepOp::kReduceScatter,
                    StepOp::kAllReduce, StepOp::kAllToAll}) {
    const bool reduces =
        op == StepOp::kReduceScatter || op == StepOp::kAllReduce;
    EXPECT_DOUBLE_EQ(with.CollectiveTime(op, {0}, bytes) -
                         without.CollectiveTime(op, {0}, bytes),
                     reduces ? 0.75 * bytes / 0.5e9 * 1e6 : 0)
        << StepOpName(op);
  }
  // The bound leaves the reduction out: it only adds time.
  EXPECT_EQ(with.LowerBound({0}).Time(2).At(bytes),
            without.LowerBound({0}).Time(2).At(bytes));
  EXPECT_DOUBLE_EQ(
      PriceOf(reducing, {64, 64}, DType::kFloat32, "P(sum)", "S(0)", {0})
          .time_us,
      6.6 + 3 * 0.6 + 0.75 * 16384 / 87.7e9 * 1e6 + 0.75 * 16384 / 0.5e9 * 1e6);
  EXPECT_EQ(PriceOf(reducing, {64, 64}, DType::kFloat32, "P(sum)", "R", {0},
                    CostModelKind::kTorch)
                .time_us,
            PriceOf(plain, {64, 64}, DType::kFloat32, "P(sum)", "R", {0},
                    CostModelKind::kTorch)
                .time_us);
}

TEST(CostModelTest, AStridedGatherPaysForUnpackingAtTheCopyRate) {
  const Mesh mesh = *Mesh::Create({.shape = {4}, .copy_gbps = 2.0});
  const StepCost rows =
      PriceOf(mesh, {64, 64}, DType::kFloat32, "S(0)", "R", {0});
  const StepCost cols =
      PriceOf(mesh, {64, 64}, DType::kFloat32, "S(1)", "R", {0});
  ASSERT_EQ(rows.bytes, cols.bytes);
  EXPECT_DOUBLE_EQ(rows.time_us, 6.6 + 3 * 0.6 + 0.75 * 16384 / 87.7e9 * 1e6);
  EXPECT_DOUBLE_EQ(cols.time_us - rows.time_us, 16384 / 2e9 * 1e6);
  // Local steps copy at the same rate.
  EXPECT_DOUBLE_EQ(
      PriceOf(mesh, {64, 64}, DType::kFloat32, "R", "S(1)", {0}).time_us,
      4096 / 2e9 * 1e6);
  // Without a measured copy rate packing is not priced (the two gathers
  // cost alike) and local steps copy at 2000 GB/s.
  const Mesh plain = MakeMesh({4});
  EXPECT_DOUBLE_EQ(
      PriceOf(plain, {64, 64}, DType::kFloat32, "S(1)", "R", {0}).time_us,
      PriceOf(plain, {64, 64}, DType::kFloat32, "S(0)", "R", {0}).time_us);
  EXPECT_DOUBLE_EQ(
      PriceOf(plain, {64, 64}, DType::kFloat32, "R", "S(1)", {0}).time_us,
      4096 / 2000e9 * 1e6);
  // The torch model prices no packing either.
  EXPECT_DOUBLE_EQ(PriceOf(mesh, {64, 64}, DType::kFloat32, "S(1)", "R", {0},
                           CostModelKind::kTorch)
                       .time_us,
                   PriceOf(mesh, {64, 64}, DType::kFloat32, "S(0)", "R", {0},
                           CostModelKind::kTorch)
                       .time_us);
}

TEST(CostModelTest, UnevenAllGatherChargesTheGatheredOutput) {
  // 5 rows of f64 over 4: 2,2,1,0 rows, padded to 2: output 4 blocks of 16 B.
  const Mesh mesh = MakeMesh({4});
  const StepCost c = PriceOf(mesh, {5}, DType::kFloat64, "S(0)", "R", {0});
  EXPECT_EQ(c.bytes, 64);
  EXPECT_EQ(c.peak_bytes, 16 + 64);
}

TEST(CostModelTest, AllToAllPadsBothDims) {
  // 5x7 i32 on 2 ranks, S(0) -> S(1): rows 3,2 (pad 3), cols 4,3 (pad 4):
  // 2 blocks of 3x4 each way.
  const Mesh mesh = MakeMesh({2});
  const StepCost c = PriceOf(mesh, {5, 7}, DType::kInt32, "S(0)", "S(1)", {0});
  EXPECT_EQ(c.bytes, 2 * 12 * 4);
  EXPECT_EQ(c.peak_bytes, 2 * 2 * 12 * 4);
}

// A mesh A x B, (A,B) flattened, with the given links.
Mesh LinkedMesh(std::vector<int64_t> shape, std::vector<LinkParams> links,
                std::vector<LinkParams> flattened_links = {}) {
  MeshSpec spec;
  spec.shape = std::move(shape);
  spec.dim_names = {"A", "B"};
  spec.flattened = {{"A", "B"}};
  spec.links = std::move(links);
  spec.flattened_links = std::move(flattened_links);
  return *Mesh::Create(spec);
}

TEST(CostModelTest, LinksTakeTheSlowestDimOfAGroup) {
  const Mesh mesh =
      LinkedMesh({2, 2}, {LinkParams{10.0, 5.0}, LinkParams{100.0, 1.0}});
  const StepCost c =
      PriceOf(mesh, {8}, DType::kFloat32, "P(sum),P(sum)", "R,R", {0, 1});
  EXPECT_DOUBLE_EQ(c.time_us, 6.6 + 6 * 5.0 + 1.5 * 32 / 10e9 * 1e6);
}

// A flattened group's own link replaces its dims' slowest for collectives
// on it (the set fields only), under alpha_beta only; the bound takes the
// fastest link over the dims, whatever the registered order.
TEST(CostModelTest, AFlattenedGroupsOwnLinkPricesItsCollectives) {
  MeshSpec spec;
  spec.shape = {2, 2};
  spec.dim_names = {"A", "B"};
  spec.flattened = {{"A", "B"}, {"B", "A"}};
  spec.links = {LinkParams{10.0, 5.0}, LinkParams{100.0, 1.0}};
  spec.flattened_links = {LinkParams{40.0, std::nullopt}, LinkParams{}};
  const Mesh mesh = *Mesh::Create(spec);
  const StepCost c =
      PriceOf(mesh, {8}, DType::kFloat32, "P(sum),P(sum)", "R,R", {0, 1});
  EXPECT_DOUBLE_EQ(c.time_us, 6.6 + 6 * 5.0 + 1.5 * 32 / 40e9 * 1e6);
  // (B,A) has no own link: its dims' slowest.
  const StepCost other =
      PriceOf(mesh, {8}, DType::kFloat32, "P(sum),P(sum)", "R,R", {1, 0});
  EXPECT_DOUBLE_EQ(other.time_us, 6.6 + 6 * 5.0 + 1.5 * 32 / 10e9 * 1e6);
  const StepCost torch = PriceOf(mesh, {8}, DType::kFloat32, "P(sum),P(sum)",
                                 "R,R", {0, 1}, CostModelKind::kTorch);
  spec.flattened_links.clear();
  EXPECT_DOUBLE_EQ(torch.time_us, PriceOf(*Mesh::Create(spec), {8},
                                          DType::kFloat32, "P(sum),P(sum)",
                                          "R,R", {0, 1}, CostModelKind::kTorch)
                                      .time_us);
  const TensorSpec tensor = *TensorSpec::Create({8}, DType::kFloat32);
  const CostModel model(mesh, tensor, {CostModelKind::kAlphaBeta, 8});
  const CostModel::CollectiveBound bound = model.LowerBound(Group{1, 0});
  EXPECT_DOUBLE_EQ(bound.hop_us, 3 * 5.0);
  EXPECT_DOUBLE_EQ(bound.us_per_byte, 3.0 / 4 / 40e9 * 1e6);
}

// An all_to_all on a flattened group: one round at its dims' slowest
// latency, each dim's share of the buffer over that dim's link; the group's
// own link prices its rings only. The bound is its price.
TEST(CostModelTest, AFlattenedAllToAllCrossesEachDimsLink) {
  const Mesh mesh =
      LinkedMesh({2, 4}, {LinkParams{0.025, 80.0}, LinkParams{0.5, 20.0}},
                 {LinkParams{0.1, 30.0}});
  // 64x8 f32 S(0),S(0) -> S(1),S(1): blocks of 8x1, 8 of them: 256 bytes.
  const StepCost c =
      PriceOf(mesh, {64, 8}, DType::kFloat32, "S(0),S(0)", "S(1),S(1)", {0, 1});
  ASSERT_EQ(c.bytes, 256);
  const double per_byte = 0.5 / 0.025e9 * 1e6 + 3.0 / 8 / 0.5e9 * 1e6;
  EXPECT_DOUBLE_EQ(c.time_us, 6.6 + 80.0 + 256 * per_byte);
  const TensorSpec tensor = *TensorSpec::Create({64, 8}, DType::kFloat32);
  const CostModel model(mesh, tensor, {CostModelKind::kAlphaBeta, 8});
  EXPECT_DOUBLE_EQ(model.CollectiveTime(StepOp::kAllGather, Group{0, 1}, 256),
                   6.6 + 7 * 30.0 + 7.0 / 8 * 256 / 0.1e9 * 1e6);
  const CostModel::CollectiveBound bound = model.LowerBound(Group{0, 1});
  EXPECT_LE(bound.AllToAllTime().At(256), c.time_us);
  EXPECT_GT(bound.AllToAllTime().At(256), c.time_us * (1 - 1e-6));
  // A single dim: the ring's bytes, one round.
  const StepCost one =
      PriceOf(mesh, {64, 8}, DType::kFloat32, "R,S(0)", "R,S(1)", {1});
  EXPECT_DOUBLE_EQ(one.time_us, 6.6 + 20.0 + 3.0 / 4 * one.bytes / 0.5e9 * 1e6);
}

TEST(CostModelTest, LocalStepsCostACopyAtLocalBandwidth) {
  const Mesh mesh = MakeMesh({4});
  const StepCost chunk =
      PriceOf(mesh, {13, 3}, DType::kFloat32, "R", "S(0)", {0});
  EXPECT_EQ(chunk.bytes, 48);
  EXPECT_DOUBLE_EQ(chunk.time_us, 48 / 2000e9 * 1e6);
  const StepCost to_max =
      PriceOf(mesh, {13, 3}, DType::kFloat32, "R", "P(max)", {0});
  EXPECT_EQ(to_max.time_us, 0.0);
  const StepCost to_sum =
      PriceOf(mesh, {13, 3}, DType::kFloat32, "S(0)", "P(sum)", {0});
  EXPECT_EQ(to_sum.bytes, 13 * 3 * 4);  // zeros of the whole extent
}

TEST(CostModelTest, TorchModelIsPyTorchsFormula) {
  // S(0) -> R on 4 ranks of a 16x16 f32: ag(B*n), B = 1 KiB / 4 in GiB.
  const Mesh mesh = MakeMesh({4});
  const StepCost c = PriceOf(mesh, {16, 16}, DType::kFloat32, "S(0)", "R", {0},
                             CostModelKind::kTorch);
  const double gib = 1024.0 / 1024 / 1024 / 1024;
  EXPECT_DOUBLE_EQ(c.time_us, 6.6 + 3 * 0.6 + gib * 3 / 4 / 87.7 * 1e6);
  const StepCost ar = PriceOf(mesh, {16, 16}, DType::kFloat32, "P(sum)", "R",
                              {0}, CostModelKind::kTorch);
  EXPECT_DOUBLE_EQ(ar.time_us, 6.6 + 6 * 0.6 + gib * 6 / 4 / 87.7 * 1e6);
}

TEST(CostModelTest, SizeOneGroupsAreFreeUnderAlphaBeta) {
  const Mesh mesh = MakeMesh({1, 4});
  const StepCost c =
      PriceOf(mesh, {8}, DType::kFloat32, "P(sum),R", "R,R", {0});
  EXPECT_EQ(c.bytes, 0);
  EXPECT_EQ(c.time_us, 0.0);
}

TEST(CostModelTest, CollectiveTimeIsTheFormulaStepsArePricedBy) {
  // Buckets are priced by CollectiveTime on their bytes; a step's own bytes
  // must give back the step's time under both models (on a mesh with a
  // copy rate, plus the packing of its blocks that are not in place).
  const Mesh mesh = MakeMesh({2, 4}, {{"A", "B"}});
  MeshSpec copying_spec = mesh.ToSpec();
  copying_spec.copy_gbps = 0.25;
  const Mesh copying = *Mesh::Create(copying_spec);
  const TensorSpec tensor = *TensorSpec::Create({12, 10}, DType::kBFloat16);
  struct Case {
    const char* from;
    const char* to;
    Group group;
  };
  const Case cases[] = {{"S(0),S(1)", "S(0),R", {1}},
                        {"P(sum),P(avg)", "R,R", {0, 1}},
                        {"P(max),R", "S(1),R", {0}},
                        {"S(0),S(1)", "S(0),S(0)", {1}}};
  for (CostModelKind kind :
       {CostModelKind::kAlphaBeta, CostModelKind::kTorch}) {
    for (const Mesh* m : {&mesh, &copying}) {
      const CostModel model(*m, tensor, {kind, 8});
      for (const Case& c : cases) {
        SCOPED_TRACE(c.from);
        const DistState a = State(*m, 2, c.from);
        const Step step = *MakeStep(*m, a, State(*m, 2, c.to), c.group);
        const StepCost cost = model.Price(a, step.transition());
        const int64_t packed =
            PackedElements(*m, a, step.transition(), tensor.shape(),
                           MaxLocalExtents(*m, a, tensor.shape()));
        EXPECT_NEAR(model.CollectiveTime(step.op, step.group, cost.bytes) +
                        static_cast<double>(packed * tensor.itemsize()) *
                            model.PackingUsPerByte(),
                    cost.time_us, 1e-9);
      }
    }
  }
  // alpha_beta: a size-1 group costs nothing.
  const Mesh one = MakeMesh({1, 2});
  EXPECT_EQ(CostModel(one, tensor, {})
                .CollectiveTime(StepOp::kAllGather, {0}, 1 << 20),
            0.0);
}

}  // namespace
}  // namespace reshard
