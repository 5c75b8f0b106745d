#include "executor/judge/conservation_checksum.h"

#include <cstring>
#include <random>
#include <vector>

#include "executor/judge/data_rule.h"
#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/core/state_text.h"
#include "tests/planner/random_cases.h"

namespace reshard::executor {
namespace {

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                             DType::kFloat16, DType::kInt32,   DType::kInt64};

// The rank's local tensor under `state`, filled by the data rule.
std::vector<char> Local(const Mesh& mesh, const TensorSpec& tensor,
                        const DistState& state, int64_t position) {
  const Box box = LocalBox(mesh, state, tensor.shape(), position);
  std::vector<char> data(box.numel() * tensor.itemsize() + 1);
  FillSource(mesh, tensor, state, position, data.data());
  return data;
}

// Every rank's share under `state`, added.
uint64_t SumOfShares(const Mesh& mesh, const TensorSpec& tensor,
                     const DistState& state) {
  uint64_t sum = 0;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    const std::vector<char> local = Local(mesh, tensor, state, p);
    sum =
        AddShares(sum, ConservationShare(mesh, tensor, state, p, local.data()));
  }
  return sum;
}

// The checksum of the whole tensor, as one rank holding all of it sees it.
uint64_t WholeChecksum(const Mesh& mesh, const TensorSpec& tensor) {
  const DistState whole = DistState::Replicated(mesh.ndim());
  const std::vector<char> data = Local(mesh, tensor, whole, 0);
  return ConservationShare(mesh, tensor, whole, 0, data.data());
}

// Where it claims exactness, the ranks' shares under any layout add up to
// the whole tensor's checksum: each element counted once, replicas once,
// integer Partial sums' pieces adding to their sum. So two layouts of one
// tensor, the source and the destination of a redistribution, agree.
TEST(ConservationChecksumTest, SharesOfEveryLayoutAddToTheWhole) {
  std::mt19937_64 rng(61);
  int exact = 0;
  for (int c = 0; c < testing::ScaledCases(1500); ++c) {
    testing::RandomCase rc = testing::MakeRandomCase(rng);
    const DType dtype = kDTypes[c % 6];
    const TensorSpec tensor = *TensorSpec::Create(rc.tensor.shape(), dtype);
    const uint64_t whole = WholeChecksum(rc.mesh, tensor);
    for (const DistState& state : {rc.src, rc.dst}) {
      if (ConservationOf(tensor, state, state) != Conservation::kExact) {
        continue;
      }
      ++exact;
      ASSERT_EQ(SumOfShares(rc.mesh, tensor, state), whole)
          << "case " << c << " " << DTypeName(dtype) << " on " << rc.mesh.ndim()
          << "-dim mesh";
    }
  }
  EXPECT_GT(exact, testing::ScaledCases(1500) / 2);
}

TEST(ConservationChecksumTest, AMovedOrChangedElementChangesIt) {
  const Mesh mesh = *Mesh::Create(MeshSpec{{2, 2}, {"A", "B"}, {}, {}, {}});
  const TensorSpec tensor = *TensorSpec::Create({8, 6}, DType::kFloat32);
  const DistState state = *ParseDistState("S(0),R", 2, tensor.rank(), "state");
  std::vector<char> local = Local(mesh, tensor, state, 0);
  const uint64_t before =
      ConservationShare(mesh, tensor, state, 0, local.data());
  float* x = reinterpret_cast<float*>(local.data());
  ASSERT_NE(x[0], x[1]);
  std::swap(x[0], x[1]);  // two elements trade places
  EXPECT_NE(ConservationShare(mesh, tensor, state, 0, local.data()), before);
  std::swap(x[0], x[1]);
  x[5] = -x[5];  // one value changes (it is g(5) = -10)
  EXPECT_NE(ConservationShare(mesh, tensor, state, 0, local.data()), before);
  // A replica (coordinate 1 on the Replicate dim B) adds nothing.
  const std::vector<char> copy = Local(mesh, tensor, state, 1);
  EXPECT_EQ(ConservationShare(mesh, tensor, state, 1, copy.data()), 0u);
}

TEST(ConservationChecksumTest, BitsCountNotValues) {
  const Mesh mesh = *Mesh::Create(MeshSpec{{1}, {"A"}, {}, {}, {}});
  const TensorSpec tensor = *TensorSpec::Create({1}, DType::kFloat32);
  const DistState state = DistState::Replicated(1);
  const float zero = 0.0f, negative_zero = -0.0f;
  EXPECT_EQ(ConservationShare(mesh, tensor, state, 0, &zero), 0u);
  // 1 · 0x80000000: a sign bit is data.
  EXPECT_EQ(ConservationShare(mesh, tensor, state, 0, &negative_zero),
            uint64_t{1} << 31);
}

TEST(ConservationChecksumTest, LabelsClaimOnlyWhatTheChecksumProves) {
  auto label = [](DType dtype, const char* src, const char* dst) {
    const TensorSpec tensor = *TensorSpec::Create({4, 4}, dtype);
    return ConservationName(ConservationOf(tensor,
                                           *ParseDistState(src, 2, 2, "src"),
                                           *ParseDistState(dst, 2, 2, "dst")));
  };
  EXPECT_EQ(label(DType::kFloat32, "S(0),R", "R,S(1)"), "exact");
  EXPECT_EQ(label(DType::kBFloat16, "R,R", "S(1),S(0)"), "exact");
  EXPECT_EQ(label(DType::kInt32, "P(sum),R", "R,R"), "exact");
  EXPECT_EQ(label(DType::kInt64, "R,R", "P(sum),P(sum)"), "exact");
  EXPECT_EQ(label(DType::kFloat32, "P(sum),R", "R,R"), "skipped");
  EXPECT_EQ(label(DType::kInt32, "P(avg),R", "R,R"), "skipped");
  EXPECT_EQ(label(DType::kInt64, "P(max),R", "R,R"), "skipped");
  EXPECT_EQ(label(DType::kInt32, "R,R", "R,P(min)"), "skipped");
}

}  // namespace
}  // namespace reshard::executor
