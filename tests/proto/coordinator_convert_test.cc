// Round trips through proto/coordinator_convert.h, the one converter of a
// run: a rank's report (every status code, per-row timings, totals, every
// tensor's verdict, memory), a run's summary (rows with members, tensors
// with checksums by rank, verdict, totals) and the work agents are sent (a
// plan or a batch, the RunWork oneof). The conversion's rules: OK ignores a
// stray message, an out-of-range code reads UNKNOWN, the test-only result
// tensors never travel, and the response fields a summary does not own are
// left alone.
#include "proto/coordinator_convert.h"

#include <cstdint>
#include <vector>

#include "common/error_kind.h"
#include "gtest/gtest.h"
#include "planner/batch/bucket_schedule.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

executor::RankReport SampleReport() {
  executor::RankReport r;
  r.rank = 5;
  r.status = absl::DeadlineExceededError("steps[1] (all_gather on A): late");
  r.seconds_min = {1e-6, 2.5e-3, 0};
  r.seconds_median = {2e-6, 3.25e-3, 1.5};
  r.seconds = {{2e-6, 1e-6, 3e-6}, {}, {1.5}};
  r.total_seconds_min = 4e-3;
  r.total_seconds_median = 5e-3;
  r.local_seconds_median = 1e-4;
  r.peak_bytes = 4096;
  r.memory_bound_bytes = 8192;
  // A checksum beyond a double's exact range; the result never travels.
  r.tensors = {{(uint64_t{1} << 61) - 2, false, "element 7: 3 != 4", {'x'}},
               {7, true, "", {}}};
  return r;
}

// A RunJobResponse's ranks carry their rows' min and median, not each
// execution's seconds.
TEST(CoordinatorConvertTest, ARankReportCanOmitTheExecutionsSeconds) {
  v1::RankReport proto;
  proto::RankReportToProto(SampleReport(), &proto,
                           proto::ExecutionSeconds::kOmit);
  ASSERT_EQ(proto.steps_size(), 3);
  for (const v1::StepTiming& step : proto.steps()) {
    EXPECT_EQ(step.seconds_size(), 0);
  }
  const executor::RankReport back = proto::RankReportFromProto(proto);
  EXPECT_EQ(back.seconds_median, SampleReport().seconds_median);
  EXPECT_EQ(back.seconds_min, SampleReport().seconds_min);
}

TEST(CoordinatorConvertTest, RankReportRoundTrips) {
  const executor::RankReport r = SampleReport();
  v1::RankReport proto;
  proto::RankReportToProto(r, &proto);
  EXPECT_EQ(proto.code(),
            static_cast<int>(absl::StatusCode::kDeadlineExceeded));
  EXPECT_EQ(proto.error(), "steps[1] (all_gather on A): late");
  ASSERT_EQ(proto.steps_size(), 3);
  const executor::RankReport back = proto::RankReportFromProto(proto);
  EXPECT_EQ(back.rank, r.rank);
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.seconds_min, r.seconds_min);
  EXPECT_EQ(back.seconds_median, r.seconds_median);
  EXPECT_EQ(back.seconds, r.seconds);
  EXPECT_EQ(back.total_seconds_min, 4e-3);
  EXPECT_EQ(back.total_seconds_median, 5e-3);
  EXPECT_EQ(back.local_seconds_median, 1e-4);
  EXPECT_EQ(back.peak_bytes, r.peak_bytes);
  EXPECT_EQ(back.memory_bound_bytes, r.memory_bound_bytes);
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_EQ(back.tensors[0].checksum, (uint64_t{1} << 61) - 2);
  EXPECT_FALSE(back.tensors[0].validated);
  EXPECT_EQ(back.tensors[0].validation_error, "element 7: 3 != 4");
  EXPECT_TRUE(back.tensors[0].result.empty());  // test-only data
  EXPECT_TRUE(back.tensors[1].validated);
  EXPECT_EQ(back.WhyNotValidated(), "tensors[0]: element 7: 3 != 4");
}

// A kind the code does not say (a binding refusal is a NOT_FOUND or a
// FAILED_PRECONDITION like others) travels in error_kind; an older
// agent's report without one reads by its code.
TEST(CoordinatorConvertTest, AnErrorKindTravelsWithTheReport) {
  executor::RankReport r;
  r.status = MarkErrorKind(absl::NotFoundError("tensors[0].source: gone"),
                           ErrorKind::kBinding);
  v1::RankReport proto;
  proto::RankReportToProto(r, &proto);
  EXPECT_EQ(proto.error_kind(), "binding");
  EXPECT_EQ(ErrorKindOf(proto::RankReportFromProto(proto).status),
            ErrorKind::kBinding);
  proto.clear_error_kind();
  EXPECT_EQ(ErrorKindOf(proto::RankReportFromProto(proto).status),
            ErrorKind::kOther);
  r.status = absl::OkStatus();
  proto::RankReportToProto(r, &proto);
  EXPECT_EQ(proto.error_kind(), "");
}

TEST(CoordinatorConvertTest, EveryStatusCodeRoundTrips) {
  for (int code = 0; code <= 16; ++code) {
    executor::RankReport r;
    r.status = code == 0
                   ? absl::OkStatus()
                   : absl::Status(static_cast<absl::StatusCode>(code), "why");
    v1::RankReport proto;
    proto::RankReportToProto(r, &proto);
    EXPECT_EQ(proto::RankReportFromProto(proto).status, r.status) << code;
  }
}

TEST(CoordinatorConvertTest, CodesReadByTheirRules) {
  v1::RankReport proto;
  proto.set_error("ignored");
  EXPECT_TRUE(proto::RankReportFromProto(proto).status.ok());
  proto.set_code(99);
  proto.set_error("from the future");
  EXPECT_EQ(proto::RankReportFromProto(proto).status,
            absl::UnknownError("from the future"));
  proto.set_code(-1);
  EXPECT_EQ(proto::RankReportFromProto(proto).status.code(),
            absl::StatusCode::kUnknown);
}

TEST(CoordinatorConvertTest, UnevenTimingsPadWithZeros) {
  executor::RankReport r;
  r.seconds_min = {1, 2};
  r.seconds_median = {3};
  v1::RankReport proto;
  proto::RankReportToProto(r, &proto);
  const executor::RankReport back = proto::RankReportFromProto(proto);
  EXPECT_EQ(back.seconds_min, (std::vector<double>{1, 2}));
  EXPECT_EQ(back.seconds_median, (std::vector<double>{3, 0}));
}

executor::RunSummary SampleSummary() {
  executor::RunSummary s;
  s.rows = {
      {"all_reduce", "A_C", 1, 1024, 1.5e-3, 2.5e-3, 2.75e-3, 0.4096, 0.6144},
      {"all_gather", "B", 3, 2248, 1e-3, 2e-3, 0, 0.5, 0.25}};
  s.tensors = {{"wq", {(uint64_t{1} << 61) - 2, 0, 42}, true, ""},
               {"bias", {3, 4, 5}, false, "rank 1: x"}};
  s.validated = false;
  s.why_not = "bias (tensors[1]): rank 1: x";
  s.seconds_min = 1e-3;
  s.seconds_median = 2e-3;
  s.local_seconds_median = 1e-5;
  s.peak_bytes = 2048;
  s.memory_bound_bytes = 999;
  s.wall_seconds = 0.413;
  return s;
}

TEST(CoordinatorConvertTest, RunSummaryRoundTrips) {
  const executor::RunSummary s = SampleSummary();
  v1::RunJobResponse proto;
  proto.set_run_id("run-1");
  proto.set_iters(10);
  proto.add_ranks()->set_rank(3);
  proto::RunSummaryToProto(s, &proto);
  // Fields the summary does not own are left alone.
  EXPECT_EQ(proto.run_id(), "run-1");
  EXPECT_EQ(proto.iters(), 10);
  EXPECT_EQ(proto.ranks_size(), 1);
  const executor::RunSummary back = proto::RunSummaryFromProto(proto);
  ASSERT_EQ(back.rows.size(), s.rows.size());
  for (size_t k = 0; k < s.rows.size(); ++k) {
    EXPECT_EQ(back.rows[k].op, s.rows[k].op);
    EXPECT_EQ(back.rows[k].group, s.rows[k].group);
    EXPECT_EQ(back.rows[k].members, s.rows[k].members);
    EXPECT_EQ(back.rows[k].bytes, s.rows[k].bytes);
    EXPECT_EQ(back.rows[k].seconds_min, s.rows[k].seconds_min);
    EXPECT_EQ(back.rows[k].seconds_median, s.rows[k].seconds_median);
    EXPECT_EQ(back.rows[k].slowest_median_seconds,
              s.rows[k].slowest_median_seconds);
    EXPECT_EQ(back.rows[k].algbw_gbps, s.rows[k].algbw_gbps);
    EXPECT_EQ(back.rows[k].busbw_gbps, s.rows[k].busbw_gbps);
  }
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_EQ(back.tensors[0].checksums, s.tensors[0].checksums);
  EXPECT_EQ(back.tensors[1].name, "bias");
  EXPECT_FALSE(back.tensors[1].validated);
  EXPECT_EQ(back.tensors[1].why_not, "rank 1: x");
  EXPECT_EQ(back.validated, s.validated);
  EXPECT_EQ(back.why_not, s.why_not);
  EXPECT_EQ(back.seconds_min, s.seconds_min);
  EXPECT_EQ(back.seconds_median, s.seconds_median);
  EXPECT_EQ(back.local_seconds_median, s.local_seconds_median);
  EXPECT_EQ(back.peak_bytes, s.peak_bytes);
  EXPECT_EQ(back.memory_bound_bytes, s.memory_bound_bytes);
  EXPECT_EQ(back.wall_seconds, s.wall_seconds);
}

TEST(CoordinatorConvertTest, RunSummaryReplacesEarlierRows) {
  v1::RunJobResponse proto;
  proto::RunSummaryToProto(SampleSummary(), &proto);
  executor::RunSummary one;
  one.rows = {{"all_gather", "A", 1, 8, 1, 1, 8e-9, 4e-9}};
  one.tensors = {{"", {7}, true, ""}};
  proto::RunSummaryToProto(one, &proto);
  EXPECT_EQ(proto.steps_size(), 1);
  EXPECT_EQ(proto.tensors_size(), 1);
  EXPECT_TRUE(proto.validated());
  EXPECT_EQ(proto.validation_error(), "");
}

executor::BatchWork SampleBatch(const Mesh& mesh) {
  executor::BatchWork work;
  for (int64_t n : {8, 6, 3}) {
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh, {n}, "S(0)", "R", PlanOptions());
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (plan.ok()) work.plans.push_back(*plan);
  }
  work.schedule = UnbucketedSchedule(mesh, work.PlanPointers(), CostOptions());
  work.bucketed = false;
  work.names = {"a", "b", "c"};
  return work;
}

TEST(CoordinatorConvertTest, BatchWorkRoundTripsAndAnEmptyBatchIsRefused) {
  const Mesh mesh = testing::MakeMesh({4});
  const executor::BatchWork work = SampleBatch(mesh);
  v1::BatchWork proto;
  proto::BatchWorkToProto(mesh, work, &proto);
  absl::StatusOr<executor::BatchWork> back =
      proto::BatchWorkFromProto(mesh, proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->bucketed);
  EXPECT_FALSE(back->single_plan);
  EXPECT_EQ(back->plans.size(), 3u);
  EXPECT_EQ(back->schedule.buckets.size(), 3u);
  EXPECT_EQ(back->names,
            (std::vector<std::string>{"item 0", "item 1", "item 2"}));
  EXPECT_EQ(back->Digest(mesh), work.Digest(mesh));
  // The schedule's peak is the plans', whatever the sender wrote.
  ASSERT_GT(work.schedule.peak_bytes, 1);
  proto.mutable_batch()->set_peak_bytes(1);
  back = proto::BatchWorkFromProto(mesh, proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->schedule.peak_bytes, work.schedule.peak_bytes);
  absl::StatusOr<executor::BatchWork> empty =
      proto::BatchWorkFromProto(mesh, v1::BatchWork());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(),
            "batch.plans: a batch needs at least one item");
}

// A plan travels as `plan` and comes back a batch of one; a batch as
// `batch`; the digest is the same on both ends either way.
TEST(CoordinatorConvertTest, RunWorkIsAPlanOrABatch) {
  const Mesh mesh = testing::MakeMesh({4});
  const executor::BatchWork batch = SampleBatch(mesh);
  const executor::BatchWork plan =
      executor::BatchWork::OfPlan(mesh, batch.plans[0]);
  for (const executor::BatchWork* work : {&plan, &batch}) {
    v1::RunWork run;
    proto::RunWorkToProto(mesh, *work, &run);
    EXPECT_EQ(run.work_case(),
              work->single_plan ? v1::RunWork::kPlan : v1::RunWork::kBatch);
    absl::StatusOr<executor::BatchWork> back =
        proto::RunWorkFromProto(mesh, run);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->single_plan, work->single_plan);
    EXPECT_EQ(back->Digest(mesh), work->Digest(mesh));
    EXPECT_EQ(back->Rows(mesh).size(), work->Rows(mesh).size());
  }
  absl::StatusOr<executor::BatchWork> neither =
      proto::RunWorkFromProto(mesh, v1::RunWork());
  EXPECT_EQ(neither.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(neither.status().message(), "run.work: neither a plan nor a batch");
}

// A response says what ran the same way: a plan comes back a batch of one,
// a batch is the one the request gave, and neither is an error.
TEST(CoordinatorConvertTest, AResponseSaysWhatRan) {
  const Mesh mesh = testing::MakeMesh({4});
  const executor::BatchWork batch = SampleBatch(mesh);
  const executor::BatchWork plan =
      executor::BatchWork::OfPlan(mesh, batch.plans[0]);
  v1::RunJobResponse response;
  proto::RanToProto(mesh, plan, &response);
  absl::StatusOr<executor::BatchWork> back =
      proto::RanFromProto(mesh, response, &batch);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->single_plan);
  EXPECT_EQ(back->Digest(mesh), plan.Digest(mesh));
  proto::RanToProto(mesh, batch, &response);
  EXPECT_FALSE(response.has_plan());
  EXPECT_FALSE(response.batch().bucketed());
  back = proto::RanFromProto(mesh, response, &batch);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->names, batch.names);
  const absl::Status neither =
      proto::RanFromProto(mesh, v1::RunJobResponse(), &batch).status();
  EXPECT_EQ(neither.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(neither.message(),
            "RunJob answered without saying what ran (an older server?)");
}

}  // namespace
}  // namespace reshard
