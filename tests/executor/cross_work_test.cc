// run_values/cross_work.h: what every rank of a cross-mesh run agrees on
// (its ranks, its digest), what each rank moves between ranks, and the
// summary of the ranks' reports (docs/DESIGN.md §9).
#include "run_values/cross_work.h"

#include <map>
#include <random>

#include "gtest/gtest.h"
#include "planner/core/state_text.h"
#include "planner/cross/cross_planner.h"
#include "tests/planner/cross_pairs.h"

namespace reshard::executor {
namespace {

CrossWork WorkOf(const testing::Pair& p) {
  absl::StatusOr<CrossMeshPlan> plan =
      MakeCrossMeshPlan(p.src_mesh, p.dst_mesh, p.request);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return {p.src_mesh, p.dst_mesh, *plan};
}

TEST(CrossWorkTest, RanksAreTheUnionAscending) {
  const Mesh src = *Mesh::Create({{2}, {"a"}, {4, 1}});
  const Mesh dst = *Mesh::Create({{3}, {"b"}, {1, 3, 0}});
  EXPECT_EQ(CrossRanks(src, dst), (std::vector<int64_t>{0, 1, 3, 4}));
}

// Random pairs: every byte one rank sends another is received, and the
// totals are the plan's; the digest is the same for the same plan and
// changes with what decides the ranks' work.
TEST(CrossWorkTest, BytesBalanceAndDigestFollowsThePlan) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 40; ++i) {
    const testing::Pair p = testing::RandomPair(rng);
    const CrossWork work = WorkOf(p);
    int64_t sent = 0, received = 0;
    for (int64_t r : work.Ranks()) {
      sent += work.SentBytes(r);
      received += work.ReceivedBytes(r);
    }
    EXPECT_EQ(sent, received) << testing::Describe(p);
    EXPECT_EQ(sent, work.plan.bytes_by_rank.total) << testing::Describe(p);
    EXPECT_EQ(work.Digest(), WorkOf(p).Digest()) << testing::Describe(p);
    CrossWork other = work;
    other.plan.layout_digest ^= 1;
    EXPECT_NE(other.Digest(), work.Digest());
    other = work;
    other.plan.unavailable_ranks.push_back(0);
    EXPECT_NE(other.Digest(), work.Digest());
  }
}

RankReport ReportOf(int64_t rank, double transfer_seconds,
                    std::optional<TensorCheck> tensor) {
  RankReport r;
  r.rank = rank;
  r.seconds_min = r.seconds_median = {0.001, transfer_seconds, 0.002};
  r.total_seconds_min = r.total_seconds_median = transfer_seconds + 0.003;
  if (tensor.has_value()) r.tensors.push_back(*tensor);
  return r;
}

// Ranks 0, 1 are sources only; 2, 3 destinations. The verdict is the
// destination ranks'; a source-only rank's checksum is 0.
TEST(CrossWorkTest, SummaryJudgesTheDestinationRanks) {
  const Mesh src = *Mesh::Create({{2}, {"a"}, {0, 1}});
  const Mesh dst = *Mesh::Create({{2}, {"b"}, {2, 3}});
  testing::Pair p{src, dst, {}, "disjoint"};
  p.request.tensor = *TensorSpec::Create({8, 4}, DType::kFloat32);
  p.request.src = *ParseDistState("S(0)", 1, 2, "src");
  p.request.dst = *ParseDistState("S(1)", 1, 2, "dst");
  const CrossWork work = WorkOf(p);
  TensorCheck good{.checksum = 7, .validated = true};
  std::vector<RankReport> reports = {
      ReportOf(3, 0.5, good), ReportOf(0, 0.25, std::nullopt),
      ReportOf(2, 0.125, good), ReportOf(1, 0.75, std::nullopt)};
  RunSummary s = SummarizeCross(work, reports);
  ASSERT_EQ(s.rows.size(), static_cast<size_t>(kCrossRows));
  EXPECT_EQ(s.rows[kTransfersRow].op, "transfers");
  EXPECT_EQ(s.rows[kTransfersRow].seconds_median, 0.75);
  EXPECT_EQ(s.rows[kTransfersRow].bytes, work.plan.bytes_by_rank.total);
  EXPECT_TRUE(s.validated);
  EXPECT_EQ(s.tensors.at(0).checksums, (std::vector<uint64_t>{0, 0, 7, 7}));

  reports[0].tensors[0].validated = false;
  reports[0].tensors[0].validation_error = "element 3 differs";
  s = SummarizeCross(work, reports);
  EXPECT_FALSE(s.validated);
  EXPECT_EQ(s.why_not, "rank 3: element 3 differs");
  reports[0].tensors.clear();
  EXPECT_EQ(SummarizeCross(work, reports).why_not, "rank 3: no verdict");
}

}  // namespace
}  // namespace reshard::executor
