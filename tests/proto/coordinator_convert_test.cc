// Round trips through proto/coordinator_convert.h: a rank's report (every
// status code, per-step timings, verdict, memory) and a run's summary
// (rows, checksums by rank, verdict); the conversion's rules: OK ignores a
// stray message, an out-of-range code reads UNKNOWN, the test-only result
// tensor never travels, and the response fields a summary does not own are
// left alone. The same for a batch's run (proto/batch_run_convert.h): a
// rank's batch report, the summary and the work agents are sent.
#include "proto/coordinator_convert.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "planner/bucket_schedule.h"
#include "proto/batch_run_convert.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

executor::RankReport SampleReport() {
  executor::RankReport r;
  r.rank = 5;
  r.status = absl::DeadlineExceededError("steps[1] (all_gather on A): late");
  r.seconds_min = {1e-6, 2.5e-3, 0};
  r.seconds_median = {2e-6, 3.25e-3, 1.5};
  r.checksum = (uint64_t{1} << 61) - 2;  // beyond a double's exact range
  r.validated = false;
  r.validation_error = "element 7: 3 != 4";
  r.peak_bytes = 4096;
  r.memory_bound_bytes = 8192;
  r.result = {'x', 'y'};
  return r;
}

TEST(CoordinatorConvertTest, RankReportRoundTrips) {
  const executor::RankReport r = SampleReport();
  v1::RankReport proto;
  RankReportToProto(r, &proto);
  EXPECT_EQ(proto.code(),
            static_cast<int>(absl::StatusCode::kDeadlineExceeded));
  EXPECT_EQ(proto.error(), "steps[1] (all_gather on A): late");
  ASSERT_EQ(proto.steps_size(), 3);
  const executor::RankReport back = RankReportFromProto(proto);
  EXPECT_EQ(back.rank, r.rank);
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.seconds_min, r.seconds_min);
  EXPECT_EQ(back.seconds_median, r.seconds_median);
  EXPECT_EQ(back.checksum, r.checksum);
  EXPECT_EQ(back.validated, r.validated);
  EXPECT_EQ(back.validation_error, r.validation_error);
  EXPECT_EQ(back.peak_bytes, r.peak_bytes);
  EXPECT_EQ(back.memory_bound_bytes, r.memory_bound_bytes);
  EXPECT_TRUE(back.result.empty());  // test-only data never travels
}

TEST(CoordinatorConvertTest, EveryStatusCodeRoundTrips) {
  for (int code = 0; code <= 16; ++code) {
    executor::RankReport r;
    r.status = code == 0
                   ? absl::OkStatus()
                   : absl::Status(static_cast<absl::StatusCode>(code), "why");
    v1::RankReport proto;
    RankReportToProto(r, &proto);
    EXPECT_EQ(RankReportFromProto(proto).status, r.status) << code;
  }
}

TEST(CoordinatorConvertTest, CodesReadByTheirRules) {
  v1::RankReport proto;
  proto.set_error("ignored");
  EXPECT_TRUE(RankReportFromProto(proto).status.ok());
  proto.set_code(99);
  proto.set_error("from the future");
  EXPECT_EQ(RankReportFromProto(proto).status,
            absl::UnknownError("from the future"));
  proto.set_code(-1);
  EXPECT_EQ(RankReportFromProto(proto).status.code(),
            absl::StatusCode::kUnknown);
}

TEST(CoordinatorConvertTest, UnevenTimingsPadWithZeros) {
  executor::RankReport r;
  r.seconds_min = {1, 2};
  r.seconds_median = {3};
  v1::RankReport proto;
  RankReportToProto(r, &proto);
  const executor::RankReport back = RankReportFromProto(proto);
  EXPECT_EQ(back.seconds_min, (std::vector<double>{1, 2}));
  EXPECT_EQ(back.seconds_median, (std::vector<double>{3, 0}));
}

executor::RunSummary SampleSummary() {
  executor::RunSummary s;
  s.steps = {{"all_reduce", "A_C", 1024, 1.5e-3, 2.5e-3, 0.4096, 0.6144},
             {"chunk", "B", 64, 3e-7, 4e-7, 0.16, 0}};
  s.checksums = {(uint64_t{1} << 61) - 2, 0, 42};
  s.validated = false;
  s.why_not = "rank 1: element 0: 1 != 2";
  s.peak_bytes = 2048;
  s.wall_seconds = 0.413;
  return s;
}

TEST(CoordinatorConvertTest, RunSummaryRoundTrips) {
  const executor::RunSummary s = SampleSummary();
  v1::RunJobResponse proto;
  proto.set_run_id("run-1");
  proto.set_iters(10);
  proto.add_ranks()->set_rank(3);
  RunSummaryToProto(s, &proto);
  // Fields the summary does not own are left alone.
  EXPECT_EQ(proto.run_id(), "run-1");
  EXPECT_EQ(proto.iters(), 10);
  EXPECT_EQ(proto.ranks_size(), 1);
  const executor::RunSummary back = RunSummaryFromProto(proto);
  ASSERT_EQ(back.steps.size(), s.steps.size());
  for (size_t k = 0; k < s.steps.size(); ++k) {
    EXPECT_EQ(back.steps[k].op, s.steps[k].op);
    EXPECT_EQ(back.steps[k].group, s.steps[k].group);
    EXPECT_EQ(back.steps[k].bytes, s.steps[k].bytes);
    EXPECT_EQ(back.steps[k].seconds_min, s.steps[k].seconds_min);
    EXPECT_EQ(back.steps[k].seconds_median, s.steps[k].seconds_median);
    EXPECT_EQ(back.steps[k].algbw_gbps, s.steps[k].algbw_gbps);
    EXPECT_EQ(back.steps[k].busbw_gbps, s.steps[k].busbw_gbps);
  }
  EXPECT_EQ(back.checksums, s.checksums);
  EXPECT_EQ(back.validated, s.validated);
  EXPECT_EQ(back.why_not, s.why_not);
  EXPECT_EQ(back.peak_bytes, s.peak_bytes);
  EXPECT_EQ(back.wall_seconds, s.wall_seconds);
}

TEST(CoordinatorConvertTest, RunSummaryReplacesEarlierRows) {
  v1::RunJobResponse proto;
  RunSummaryToProto(SampleSummary(), &proto);
  executor::RunSummary one;
  one.steps = {{"all_gather", "A", 8, 1, 1, 8e-9, 4e-9}};
  one.checksums = {7};
  RunSummaryToProto(one, &proto);
  EXPECT_EQ(proto.steps_size(), 1);
  EXPECT_EQ(proto.checksums_size(), 1);
  EXPECT_TRUE(proto.validated());
  EXPECT_EQ(proto.validation_error(), "");
}

// proto/batch_run_convert.h: a batch's report, its summary and its work.
TEST(BatchRunConvertTest, ABatchReportRoundTripsAsABatch) {
  executor::BatchRankReport r;
  r.rank = 3;
  r.status = absl::CancelledError("run x cancelled (by the Coordinator)");
  r.seconds_min = {1e-3, 2e-3};
  r.seconds_median = {1.5e-3, 2.5e-3};
  r.total_seconds_min = 4e-3;
  r.total_seconds_median = 5e-3;
  r.local_seconds_median = 1e-4;
  r.memory_bound_bytes = 1234;
  r.tensors = {{(uint64_t{1} << 61) - 3, true, ""}, {7, false, "element 2"}};
  v1::RankReport proto;
  RankResultToProto(r, &proto);
  EXPECT_TRUE(proto.has_batch());
  EXPECT_FALSE(proto.validated());
  EXPECT_EQ(proto.validation_error(), "tensors[1]: element 2");
  const executor::RankResult back = RankResultFromProto(proto);
  ASSERT_TRUE(executor::IsBatch(back));
  const auto& b = std::get<executor::BatchRankReport>(back);
  EXPECT_EQ(b.rank, 3);
  EXPECT_EQ(b.status, r.status);
  EXPECT_EQ(b.seconds_min, r.seconds_min);
  EXPECT_EQ(b.seconds_median, r.seconds_median);
  EXPECT_EQ(b.total_seconds_min, 4e-3);
  EXPECT_EQ(b.total_seconds_median, 5e-3);
  EXPECT_EQ(b.local_seconds_median, 1e-4);
  EXPECT_EQ(b.memory_bound_bytes, 1234);
  ASSERT_EQ(b.tensors.size(), 2u);
  EXPECT_EQ(b.tensors[0].checksum, (uint64_t{1} << 61) - 3);
  EXPECT_FALSE(b.tensors[1].validated);
  EXPECT_EQ(b.tensors[1].validation_error, "element 2");
  // A plan's report stays a plan's.
  v1::RankReport plan;
  RankResultToProto(SampleReport(), &plan);
  EXPECT_FALSE(plan.has_batch());
  EXPECT_FALSE(executor::IsBatch(RankResultFromProto(plan)));
}

TEST(BatchRunConvertTest, ABatchSummaryRoundTrips) {
  executor::BatchSummary s;
  s.buckets = {{"all_gather", "A", 3, 2248, 1e-3, 2e-3, 0.5, 0.25}};
  s.tensors = {{"wq", {1, 2}, true, ""}, {"bias", {3, 4}, false, "rank 1: x"}};
  s.validated = false;
  s.why_not = "bias (tensors[1]): rank 1: x";
  s.seconds_min = 1e-3;
  s.seconds_median = 2e-3;
  s.local_seconds_median = 1e-5;
  s.memory_bound_bytes = 999;
  s.wall_seconds = 0.5;
  v1::RunJobResponse proto;
  BatchSummaryToProto(s, false, &proto);
  EXPECT_FALSE(proto.batch().bucketed());
  EXPECT_EQ(proto.validation_error(), s.why_not);
  const executor::BatchSummary back = BatchSummaryFromProto(proto);
  ASSERT_EQ(back.buckets.size(), 1u);
  EXPECT_EQ(back.buckets[0].op, "all_gather");
  EXPECT_EQ(back.buckets[0].members, 3);
  EXPECT_EQ(back.buckets[0].bytes, 2248);
  EXPECT_EQ(back.buckets[0].busbw_gbps, 0.25);
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_EQ(back.tensors[1].name, "bias");
  EXPECT_EQ(back.tensors[1].checksums, (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(back.tensors[1].why_not, "rank 1: x");
  EXPECT_FALSE(back.validated);
  EXPECT_EQ(back.seconds_median, 2e-3);
  EXPECT_EQ(back.local_seconds_median, 1e-5);
  EXPECT_EQ(back.memory_bound_bytes, 999);
  EXPECT_EQ(back.wall_seconds, 0.5);
}

TEST(BatchRunConvertTest, BatchWorkRoundTripsAndAnEmptyBatchIsRefused) {
  const Mesh mesh = testing::MakeMesh({4});
  executor::BatchWork work;
  for (int64_t n : {8, 6, 3}) {
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh, {n}, "S(0)", "R", PlanOptions());
    ASSERT_TRUE(plan.ok()) << plan.status();
    work.plans.push_back(*plan);
  }
  work.rows = UnbucketedSchedule(mesh, work.PlanPointers(), CostOptions());
  work.bucketed = false;
  v1::BatchWork proto;
  BatchWorkToProto(mesh, work, &proto);
  absl::StatusOr<executor::BatchWork> back = BatchWorkFromProto(mesh, proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->bucketed);
  EXPECT_EQ(back->plans.size(), 3u);
  EXPECT_EQ(back->rows.buckets.size(), 3u);
  EXPECT_EQ(back->Digest(mesh), work.Digest(mesh));
  absl::StatusOr<executor::BatchWork> empty =
      BatchWorkFromProto(mesh, v1::BatchWork());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(),
            "batch.plans: a batch needs at least one item");
}

}  // namespace
}  // namespace reshard
