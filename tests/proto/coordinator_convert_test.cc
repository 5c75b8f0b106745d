// Round trips through proto/coordinator_convert.h: a rank's report (every
// status code, per-step timings, verdict, memory) and a run's summary
// (rows, checksums by rank, verdict); the conversion's rules: OK ignores a
// stray message, an out-of-range code reads UNKNOWN, the test-only result
// tensor never travels, and the response fields a summary does not own are
// left alone.
#include "proto/coordinator_convert.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

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

}  // namespace
}  // namespace reshard
