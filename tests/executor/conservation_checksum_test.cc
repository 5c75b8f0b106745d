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

// Σ (k + 1)·r mod p by the definition: divisions, one element at a time.
uint64_t ReferenceAdd(uint64_t sum, int64_t k, uint64_t residue) {
  const unsigned __int128 term =
      static_cast<unsigned __int128>(static_cast<uint64_t>(k + 1) %
                                     kChecksumModulus) *
      (residue % kChecksumModulus);
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(sum % kChecksumModulus) + term) %
      kChecksumModulus);
}

TEST(ConservationChecksumTest, TheMersenneFoldIsTheDefinition) {
  std::mt19937_64 rng(2);
  const uint64_t p = kChecksumModulus;
  const uint64_t edges[] = {0,     1,     p - 1,        p,
                            p + 1, 2 * p, ~uint64_t{0}, uint64_t{1} << 63};
  for (uint64_t sum : edges) {
    for (uint64_t residue : edges) {
      for (int64_t k : {int64_t{0}, int64_t{1}, static_cast<int64_t>(p - 2),
                        static_cast<int64_t>(p), int64_t{1} << 62}) {
        ASSERT_EQ(ChecksumAdd(sum, k, residue), ReferenceAdd(sum, k, residue))
            << sum << " " << k << " " << residue;
      }
    }
  }
  for (int i = 0; i < 100000; ++i) {
    const uint64_t sum = rng(), residue = rng();
    const int64_t k = static_cast<int64_t>(rng() >> 2);
    ASSERT_EQ(ChecksumAdd(sum, k, residue), ReferenceAdd(sum, k, residue));
  }
}

// A rank's share, row by row, is the definition element by element.
TEST(ConservationChecksumTest, AShareIsItsElementsTermByTerm) {
  std::mt19937_64 rng(7);
  for (int c = 0; c < testing::ScaledCases(300); ++c) {
    testing::RandomCase rc = testing::MakeRandomCase(rng);
    const DType dtype = kDTypes[c % 6];
    const TensorSpec tensor = *TensorSpec::Create(rc.tensor.shape(), dtype);
    const DistState& state = rc.src;
    const int64_t position = c % rc.mesh.world_size();
    const std::vector<char> local = Local(rc.mesh, tensor, state, position);
    const uint64_t share =
        ConservationShare(rc.mesh, tensor, state, position, local.data());
    const Box box = LocalBox(rc.mesh, state, tensor.shape(), position);
    bool counted = true;
    for (int m = 0; m < state.mesh_ndim(); ++m) {
      counted = counted && !(state.placement(m).is_replicate() &&
                             rc.mesh.Coordinate(position, m) != 0);
    }
    uint64_t expected = 0;
    const int64_t size = tensor.itemsize();
    ForEachBoxElement(tensor.shape(), box, [&](int64_t k, int64_t i) {
      uint64_t bits = 0;
      std::memcpy(&bits, local.data() + k * size, size);
      if (dtype == DType::kInt32 || dtype == DType::kInt64) {
        int64_t v = 0;
        if (dtype == DType::kInt32) {
          int32_t v32;
          std::memcpy(&v32, local.data() + k * size, 4);
          v = v32;
        } else {
          std::memcpy(&v, local.data() + k * size, 8);
        }
        bits = ChecksumResidue(v);
      }
      expected = ReferenceAdd(expected, i, bits);
    });
    ASSERT_EQ(share, counted ? expected : 0)
        << "case " << c << " " << DTypeName(dtype);
  }
}

// Rows longer than a chunk of the row sums, of extreme bit patterns (all
// ones, the top bit, negative integers), sharded on a 2-D mesh: each
// rank's share is still the definition term by term.
TEST(ConservationChecksumTest, LongRowsOfExtremeBitsAreTheDefinition) {
  std::mt19937_64 rng(11);
  const Mesh mesh = *Mesh::Create({{2, 1}, {"a", "b"}, {}});
  const DistState state = *ParseDistState("S(0),R", 2, 2, "state");
  for (DType dtype : kDTypes) {
    const TensorSpec tensor = *TensorSpec::Create({4, 3 * 65536 + 17}, dtype);
    for (int64_t position = 0; position < 2; ++position) {
      const Box box = LocalBox(mesh, state, tensor.shape(), position);
      const int64_t size = tensor.itemsize();
      std::vector<char> local(box.numel() * size);
      for (int64_t k = 0; k < box.numel(); ++k) {
        const uint64_t pick = rng() % 4;
        const uint64_t bits = pick == 0   ? ~uint64_t{0}
                              : pick == 1 ? uint64_t{1} << (8 * size - 1)
                                          : rng();
        std::memcpy(local.data() + k * size, &bits, size);
      }
      uint64_t expected = 0;
      ForEachBoxElement(tensor.shape(), box, [&](int64_t k, int64_t i) {
        uint64_t bits = 0;
        std::memcpy(&bits, local.data() + k * size, size);
        if (dtype == DType::kInt32) {
          int32_t v;
          std::memcpy(&v, local.data() + k * size, 4);
          bits = ChecksumResidue(v);
        } else if (dtype == DType::kInt64) {
          int64_t v;
          std::memcpy(&v, local.data() + k * size, 8);
          bits = ChecksumResidue(v);
        }
        expected = ReferenceAdd(expected, i, bits);
      });
      EXPECT_EQ(ConservationShare(mesh, tensor, state, position, local.data()),
                expected)
          << DTypeName(dtype) << " position " << position;
    }
  }
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
