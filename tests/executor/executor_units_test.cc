// Unit tests of the executor's pure parts: 16-bit float conversions and
// reductions, box packing, the data rule's Partial split, checksums and the
// rank report's wire form.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "executor/judge/data_rule.h"
#include "executor/judge/harness.h"
#include "executor/launch/local_launch.h"
#include "executor/run/box_copy.h"
#include "executor/run/element_ops.h"
#include "gtest/gtest.h"
#include "planner/core/state_text.h"
#include "run_values/run_summary.h"
#include "tests/planner/test_util.h"

namespace reshard::executor {
namespace {

TEST(ElementOpsTest, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16ToFloat(0x3f80), 1.0f);
  // 257 lies halfway between 256 and 258 in bfloat16: ties go to even.
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(257.0f)), 256.0f);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(259.0f)), 260.0f);
  EXPECT_EQ(FloatToFloat16(1.0f), 0x3c00);
  EXPECT_EQ(FloatToFloat16(-2.0f), 0xc000);
  EXPECT_EQ(Float16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(FloatToFloat16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(Float16ToFloat(0x0001), std::ldexp(1.0f, -24));  // subnormal
  EXPECT_EQ(FloatToFloat16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even
  EXPECT_EQ(FloatToFloat16(2049.0f), FloatToFloat16(2048.0f));
  EXPECT_TRUE(std::isnan(Float16ToFloat(FloatToFloat16(NAN))));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
  // Every integer of the data rule's range survives both formats.
  for (int v = -256; v <= 256; ++v) {
    EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(v)), v);
    EXPECT_EQ(Float16ToFloat(FloatToFloat16(v)), v);
  }
}

// bfloat16 rounding is a select, not a branch (so its loops vectorize):
// on bit patterns spread over every float, and on every NaN edge (a
// payload that rounding would carry into infinity), it is round to
// nearest even with NaN kept NaN, as a reduction over bfloat16 is too.
TEST(ElementOpsTest, BFloat16RoundingOverSpreadBitPatterns) {
  auto reference = [](uint32_t bits) -> uint16_t {
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
    return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
  };
  std::vector<uint32_t> patterns = {0x7f800001, 0x7fffffff, 0xffffffff,
                                    0x7f800000, 0xff800000, 0x7f7fffff,
                                    0x00000001, 0x80000000, 0x3f808000};
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65521) {
    patterns.push_back(static_cast<uint32_t>(bits));
  }
  for (uint32_t bits : patterns) {
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    ASSERT_EQ(FloatToBFloat16(value), reference(bits)) << std::hex << bits;
  }
  const uint16_t nan = FloatToBFloat16(NAN);
  uint16_t a[20], b[20], out[20];
  for (int k = 0; k < 20; ++k) {
    a[k] = FloatToBFloat16(static_cast<float>(k));
    b[k] = k == 13 ? nan : FloatToBFloat16(0.5f);
  }
  ReduceElements(DType::kBFloat16, ReduceOp::kSum, out, a, b, 20);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(out[13])));
  EXPECT_EQ(BFloat16ToFloat(out[3]), 3.5f);
}

TEST(ElementOpsTest, ReductionsActOnValuesNotBits) {
  uint16_t a[3] = {FloatToBFloat16(-3), FloatToBFloat16(5),
                   FloatToBFloat16(1.5f)};
  uint16_t b[3] = {FloatToBFloat16(2), FloatToBFloat16(-7),
                   FloatToBFloat16(2.5f)};
  uint16_t out[3];
  ReduceElements(DType::kBFloat16, ReduceOp::kSum, out, a, b, 3);
  EXPECT_EQ(BFloat16ToFloat(out[0]), -1.0f);
  EXPECT_EQ(BFloat16ToFloat(out[1]), -2.0f);
  EXPECT_EQ(BFloat16ToFloat(out[2]), 4.0f);
  // As unsigned words -3 (0xc200) exceeds 2 (0x4000): max must read values.
  const uint16_t c = FloatToFloat16(-3), d = FloatToFloat16(2);
  ReduceElements(DType::kFloat16, ReduceOp::kMax, out, &c, &d, 1);
  EXPECT_EQ(Float16ToFloat(out[0]), 2.0f);
  int32_t x[2] = {7, -9}, y[2] = {-3, 4};
  ReduceElements(DType::kInt32, ReduceOp::kMin, x, x, y, 2);
  EXPECT_EQ(x[0], -3);
  EXPECT_EQ(x[1], -9);
}

// The reductions' loops vectorize (element_ops.cc): every element of a
// length that is no multiple of any vector width, out of place and in place
// (out == a, as Gloo's ring reduces), matches the element's own value,
// integer sums wrapping.
TEST(ElementOpsTest, EveryElementOfLongBuffersInAndOutOfPlace) {
  constexpr int64_t kCount = 1003;
  std::vector<float> fa(kCount), fb(kCount), fout(kCount);
  std::vector<int32_t> ia(kCount), ib(kCount), iout(kCount);
  std::vector<uint16_t> ha(kCount), hb(kCount), hout(kCount);
  for (int64_t k = 0; k < kCount; ++k) {
    fa[k] = static_cast<float>(k % 17) - 8.5f;
    fb[k] = static_cast<float>(k % 13) * 0.25f - 1;
    ia[k] = k % 2 == 0 ? INT32_MAX - static_cast<int32_t>(k) : -3;
    ib[k] = static_cast<int32_t>(k) + 1;
    ha[k] = FloatToBFloat16(fa[k]);
    hb[k] = FloatToBFloat16(fb[k]);
  }
  ReduceElements(DType::kFloat32, ReduceOp::kMax, fout.data(), fa.data(),
                 fb.data(), kCount);
  ReduceElements(DType::kInt32, ReduceOp::kSum, iout.data(), ia.data(),
                 ib.data(), kCount);
  ReduceElements(DType::kBFloat16, ReduceOp::kSum, hout.data(), ha.data(),
                 hb.data(), kCount);
  std::vector<float> in_place = fa;
  ReduceElements(DType::kFloat32, ReduceOp::kSum, in_place.data(),
                 in_place.data(), fb.data(), kCount);
  for (int64_t k = 0; k < kCount; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(fout[k], fa[k] > fb[k] ? fa[k] : fb[k]);
    // INT32_MAX - k + (k + 1) wraps to INT32_MIN.
    EXPECT_EQ(iout[k], k % 2 == 0 ? INT32_MIN : static_cast<int32_t>(k) - 2);
    EXPECT_EQ(BFloat16ToFloat(hout[k]),
              BFloat16ToFloat(FloatToBFloat16(fa[k] + fb[k])));
    EXPECT_EQ(in_place[k], fa[k] + fb[k]);
  }
}

TEST(ElementOpsTest, DivisionIsIeeeDivision) {
  // x / 3 is not x * (1/3) in float: 0.3f * 3 / 3 must round-trip.
  float f[2] = {3.0f * 0.3f, 7.0f};
  DivideElements(DType::kFloat32, f, 2, 3);
  EXPECT_EQ(f[0], 3.0f * 0.3f / 3.0f);
  EXPECT_EQ(f[1], 7.0f / 3.0f);
  int64_t i[2] = {12, -12};
  DivideElements(DType::kInt64, i, 2, 4);
  EXPECT_EQ(i[0], 3);
  EXPECT_EQ(i[1], -3);
  uint16_t h = FloatToFloat16(12);
  DivideElements(DType::kFloat16, &h, 1, 3);
  EXPECT_EQ(Float16ToFloat(h), 4.0f);
}

TEST(BoxCopyTest, PackUnpackMatchesElementByElement) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int rank = 1 + rng() % 4;
    std::vector<int64_t> shape(rank);
    Box box{std::vector<int64_t>(rank), std::vector<int64_t>(rank)};
    for (int d = 0; d < rank; ++d) {
      shape[d] = 1 + rng() % 5;
      box.offset[d] = rng() % (shape[d] + 1);
      box.extent[d] = rng() % (shape[d] - box.offset[d] + 1);
    }
    int64_t numel = 1;
    for (int64_t e : shape) numel *= e;
    std::vector<int32_t> tensor(numel);
    for (int64_t k = 0; k < numel; ++k) tensor[k] = static_cast<int32_t>(k);
    std::vector<int32_t> packed(box.numel(), -1);
    PackBox(tensor.data(), shape, box, 4, packed.data());
    // Brute force: walk the box's elements in row-major order.
    std::vector<int64_t> idx(rank, 0);
    for (int64_t k = 0; k < box.numel(); ++k) {
      int64_t linear = 0;
      for (int d = 0; d < rank; ++d) {
        linear = linear * shape[d] + box.offset[d] + idx[d];
      }
      ASSERT_EQ(packed[k], linear) << "trial " << trial;
      for (int d = rank - 1; d >= 0 && ++idx[d] == box.extent[d]; --d)
        idx[d] = 0;
    }
    std::vector<int32_t> back(numel, -1);
    UnpackBox(packed.data(), back.data(), shape, box, 4);
    for (int64_t k = 0; k < box.numel(); ++k) {
      EXPECT_NE(std::find(back.begin(), back.end(), packed[k]), back.end());
    }
    const std::optional<int64_t> at = ContiguousOffset(shape, box);
    if (at.has_value() && box.numel() > 0) {
      EXPECT_EQ(tensor[*at], packed[0]);
      EXPECT_EQ(tensor[*at + box.numel() - 1], packed.back());
    }
  }
}

int64_t Reduce(const std::vector<int64_t>& values, ReduceOp op,
               int64_t divisor) {
  int64_t r = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    r = op == ReduceOp::kMax   ? std::max(r, values[i])
        : op == ReduceOp::kMin ? std::min(r, values[i])
                               : r + values[i];
  }
  return r / divisor;
}

TEST(DataRuleTest, PartialContributionsReduceExactlyToTheValue) {
  // 2x2x4 mesh with P(sum), P(avg), P(avg): 16 ranks, divisor 8.
  for (const char* src : {"P(sum),P(avg),P(avg)", "P(max),P(max),R",
                          "P(min),R,P(min)", "P(avg),P(avg),P(avg)"}) {
    SCOPED_TRACE(src);
    const Mesh mesh = testing::MakeMesh({2, 2, 4});
    const TensorSpec tensor = *TensorSpec::Create({5, 13}, DType::kBFloat16);
    const DistState state = *ParseDistState(src, 3, 2, "src");
    const PartialReduction partial = PartialOf(mesh, state);
    std::vector<std::vector<uint16_t>> data(16, std::vector<uint16_t>(65));
    for (int64_t p = 0; p < 16; ++p) {
      FillSource(mesh, tensor, state, p, data[p].data());
    }
    for (int64_t p = 0; p < 16; ++p) {
      if (mesh.IndexInGroup(p, partial.dims) != 0) continue;
      for (int64_t i = 0; i < 65; ++i) {
        std::vector<int64_t> values;
        for (int64_t q : mesh.GroupPositions(p, partial.dims)) {
          const float v = BFloat16ToFloat(data[q][i]);
          ASSERT_LE(std::abs(v), 256.0f);  // exact in bfloat16
          values.push_back(static_cast<int64_t>(v));
        }
        EXPECT_EQ(Reduce(values, partial.op, partial.avg_divisor),
                  SourceValue(i));
      }
    }
  }
}

TEST(DataRuleTest, ChecksumFollowsTheFormula) {
  const int32_t x[3] = {-15, 0, 7};
  // 1*(-15) + 3*7 = 6.
  EXPECT_EQ(Checksum(DType::kInt32, x, 3), 6u);
  const int64_t big[1] = {-1};
  EXPECT_EQ(Checksum(DType::kInt64, big, 1), kChecksumModulus - 1);
}

TEST(DataRuleTest, ValidationNamesTheElement) {
  const Mesh mesh = testing::MakeMesh({2});
  const TensorSpec tensor = *TensorSpec::Create({4}, DType::kInt32);
  const DistState dst = *ParseDistState("S(0)", 1, 1, "dst");
  int32_t good[2] = {-13, -12};  // position 1 holds global 2, 3
  EXPECT_TRUE(ValidateResult(mesh, tensor, dst, 1, 1, good).ok());
  int32_t bad[2] = {-13, 5};
  const absl::Status s = ValidateResult(mesh, tensor, dst, 1, 1, bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(),
            "rank at position 1: element 1 (global index 3) is 5, expected "
            "-12");
}

// Two ranks slow by turns: each one's median is 1 s, but every execution
// but the last waits 4 s for one of them, so a run pays a median of 4 s.
TEST(RunSummaryTest, TheSlowestRanksMedianIsPerExecution) {
  const Mesh mesh = testing::MakeMesh({2});
  const Plan plan = *MakePlan(
      mesh, *ParsePlanRequest(mesh, {8}, "f32", "S(0)", "R", PlanOptions()));
  const executor::BatchWork work = executor::BatchWork::OfPlan(mesh, plan);
  std::vector<RankReport> reports(2);
  reports[0].seconds_median = {1};
  reports[0].seconds = {{4, 1, 1, 4, 1}};
  reports[1].rank = 1;
  reports[1].seconds_median = {1};
  reports[1].seconds = {{1, 4, 4, 1, 1, 9}};  // one more: not counted
  const executor::RunSummary s = executor::Summarize(mesh, work, reports);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].seconds_median, 1);
  EXPECT_EQ(s.rows[0].slowest_median_seconds, 4);
  // A first rank stopped before any timed execution: none every rank
  // carries, whatever the order.
  std::swap(reports[0], reports[1]);
  reports[0].seconds = {{}};
  EXPECT_EQ(
      executor::Summarize(mesh, work, reports).rows[0].slowest_median_seconds,
      0);
  // A rank that reports no executions (an older agent): not known.
  reports[0].seconds.clear();
  EXPECT_EQ(
      executor::Summarize(mesh, work, reports).rows[0].slowest_median_seconds,
      0);
}

TEST(RankReportTest, RoundTripsThroughItsWireForm) {
  RankReport r;
  r.rank = 5;
  r.status = absl::DeadlineExceededError("all_gather on A: timed\nout");
  r.seconds_min = {1e-6, 0.25};
  r.seconds_median = {2e-6, 0.5};
  r.seconds = {{2e-6, 1e-6, 3.5e-6}, {}};
  r.total_seconds_min = 0.125;
  r.total_seconds_median = 0.75;
  r.local_seconds_median = 1e-9;
  r.peak_bytes = 77;
  r.memory_bound_bytes = 99;
  r.tensors = {{kChecksumModulus - 3, false, "x", {'\n', '\0', 'z'}},
               {7, true, "", {}}};
  const absl::StatusOr<RankReport> back = ParseReport(SerializeReport(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->rank, 5);
  EXPECT_EQ(back->status, r.status);
  EXPECT_EQ(back->seconds_min, r.seconds_min);
  EXPECT_EQ(back->seconds_median, r.seconds_median);
  EXPECT_EQ(back->seconds, r.seconds);
  EXPECT_EQ(back->total_seconds_min, 0.125);
  EXPECT_EQ(back->total_seconds_median, 0.75);
  EXPECT_EQ(back->local_seconds_median, 1e-9);
  EXPECT_EQ(back->peak_bytes, 77);
  EXPECT_EQ(back->memory_bound_bytes, 99);
  ASSERT_EQ(back->tensors.size(), 2u);
  EXPECT_EQ(back->tensors[0].checksum, kChecksumModulus - 3);
  EXPECT_FALSE(back->tensors[0].validated);
  EXPECT_EQ(back->tensors[0].validation_error, "x");
  EXPECT_EQ(back->tensors[0].result, r.tensors[0].result);
  EXPECT_TRUE(back->tensors[1].validated);
  EXPECT_EQ(back->WhyNotValidated(), "tensors[0]: x");
  EXPECT_EQ(ParseReport("garbage").status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(LocalLaunchTest, ChildrenPastTheDeadlineAreKilledAndReaped) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<ChildResult>> children = RunLocalRanks(
      3,
      [](int rank) -> std::string {
        if (rank == 1) {
          while (true) pause();  // never returns
        }
        if (rank == 2) abort();
        return "done";
      },
      std::chrono::milliseconds(500));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_EQ((*children)[0].output, "done");
  EXPECT_EQ((*children)[0].exit_code, 0);
  EXPECT_TRUE((*children)[1].killed);
  EXPECT_EQ((*children)[1].signal, SIGKILL);
  EXPECT_TRUE((*children)[2].killed);
  EXPECT_EQ((*children)[2].signal, SIGABRT);
  EXPECT_LT(seconds, 2.0);
  // Every child was reaped: this process has none left.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace reshard::executor
