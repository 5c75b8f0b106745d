// The agent's metrics without processes: the group-label cap, the kind of a
// failure (the digest mismatch PrepareRun reports included), what one run
// records on a registry (read back through Collect, as a scrape would), and
// the metrics flags.
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_config.h"
#include "agent/agent_metrics.h"
#include "agent/run_work.h"
#include "common/error_kind.h"
#include "common/schedule_bounds.h"
#include "gtest/gtest.h"
#include "metrics/label_cap.h"
#include "metrics/size_bucket.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/state_text.h"
#include "planner/cross/cross_planner.h"
#include "prometheus/registry.h"
#include "proto/convert.h"
#include "proto/coordinator_convert.h"
#include "proto/cross_convert.h"
#include "tests/planner/test_util.h"

namespace reshard::agent {
namespace {

TEST(LabelCapTest, AdmitsTheFirstValuesAndCountsTheRestAsOther) {
  metrics::LabelCap cap(2);
  EXPECT_EQ(cap.Admit("A"), "A");
  EXPECT_EQ(cap.Admit("B"), "B");
  EXPECT_EQ(cap.Admit("C"), metrics::LabelCap::kOther);
  EXPECT_EQ(cap.Admit("A"), "A");  // seen before the cap: still itself
  EXPECT_EQ(cap.Admit("D"), metrics::LabelCap::kOther);
}

TEST(ErrorKindTest, CodesAndTheDigestMarkMapToKinds) {
  EXPECT_EQ(ErrorKindOf(absl::DeadlineExceededError("x")), ErrorKind::kTimeout);
  EXPECT_EQ(ErrorKindOf(absl::UnavailableError("x")), ErrorKind::kPeer);
  EXPECT_EQ(ErrorKindOf(absl::AbortedError("x")), ErrorKind::kPeer);
  EXPECT_EQ(ErrorKindOf(absl::InvalidArgumentError("x")), ErrorKind::kBadPlan);
  EXPECT_EQ(ErrorKindOf(absl::FailedPreconditionError("x")),
            ErrorKind::kBadPlan);
  EXPECT_EQ(ErrorKindOf(absl::CancelledError("x")), ErrorKind::kCancelled);
  EXPECT_EQ(ErrorKindOf(absl::InternalError("x")), ErrorKind::kOther);
  EXPECT_EQ(ErrorKindOf(MarkErrorKind(absl::FailedPreconditionError("x"),
                                      ErrorKind::kDigestMismatch)),
            ErrorKind::kDigestMismatch);
  EXPECT_EQ(
      ErrorKindOf(MarkErrorKind(absl::NotFoundError("x"), ErrorKind::kBinding)),
      ErrorKind::kBinding);
  for (ErrorKind kind : kAllErrorKinds) {
    EXPECT_EQ(ErrorKindNamed(ErrorKindName(kind)), kind);
  }
  EXPECT_EQ(ErrorKindNamed("nonsense"), std::nullopt);
  EXPECT_EQ(ErrorKindName(ErrorKind::kDigestMismatch), "digest_mismatch");
  EXPECT_EQ(ErrorKindName(ErrorKind::kBadPlan), "bad_plan");
}

TEST(ErrorKindTest, PrepareRunMarksADigestMismatch) {
  const Mesh mesh = testing::MakeMesh({2, 2});
  absl::StatusOr<Plan> plan =
      testing::PlanChecked(mesh, {8, 6}, "S(0),R", "R,R", PlanOptions());
  ASSERT_TRUE(plan.ok()) << plan.status();
  v1::RunWork run;
  *run.mutable_mesh() = proto::MeshToProto(mesh);
  proto::PlanToProto(mesh, *plan, run.mutable_plan());
  run.set_run_id("run-1");
  run.set_comm_prefix("job/1/run-1");
  run.set_digest(executor::BatchWork::OfPlan(mesh, *plan).Digest(mesh) ^ 1);
  absl::StatusOr<RunSetup> setup = PrepareRun(run, 4);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(ErrorKindOf(setup.status()), ErrorKind::kDigestMismatch);
  run.set_run_id("");
  EXPECT_EQ(ErrorKindOf(PrepareRun(run, 4).status()), ErrorKind::kBadPlan);
}

// Sample values by "name{label=value,...}" (labels in prometheus-cpp's
// sorted order), as the text format writes them.
std::map<std::string, double> Samples(prometheus::Registry& registry) {
  std::map<std::string, double> out;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::string labels;
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        labels += (labels.empty() ? "" : ",") + label.name + "=" + label.value;
      }
      const std::string key = family.name + "{" + labels + "}";
      if (family.type == prometheus::MetricType::Histogram) {
        out[key + "count"] = metric.histogram.sample_count;
        out[key + "sum"] = metric.histogram.sample_sum;
      } else if (family.type == prometheus::MetricType::Gauge) {
        out[key] = metric.gauge.value;
      } else {
        out[key] = metric.counter.value;
      }
    }
  }
  return out;
}

class AgentMetricsTest : public ::testing::Test {
 protected:
  // S(0),R -> R,R on 2x2: one all_gather over A; B is replicated.
  void SetUp() override {
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh_, {8, 6}, "S(0),R", "R,R", PlanOptions());
    ASSERT_TRUE(plan.ok()) << plan.status();
    plan_ = *plan;
    ASSERT_EQ(plan_.steps.size(), 1u);
    report_.tensors = {{0, true, "", {}}};
    report_.seconds_min = {0.001};
    report_.seconds_median = {0.002};
    options_.iters = 3;
    options_.warmup = 1;
  }
  RunSetup SetupOf(const Mesh& mesh, const Plan& plan) const {
    return RunSetup{mesh, executor::BatchWork::OfPlan(mesh, plan), options_,
                    std::chrono::seconds(1)};
  }

  prometheus::Registry registry_;
  AgentMetrics metrics_{registry_};
  Mesh mesh_ = testing::MakeMesh({2, 2});
  Plan plan_;
  executor::RankReport report_;
  executor::HarnessOptions options_;
};

// Powers of 4 from 1 KiB to 1 GiB: the largest not above the size.
TEST(SizeBucketTest, PowersOfFourFromOneKiBToOneGiB) {
  EXPECT_EQ(metrics::SizeBucket(0), "1KiB");
  EXPECT_EQ(metrics::SizeBucket(4095), "1KiB");
  EXPECT_EQ(metrics::SizeBucket(4096), "4KiB");
  EXPECT_EQ(metrics::SizeBucket(int64_t{1} << 20), "1MiB");
  EXPECT_EQ(metrics::SizeBucket((int64_t{64} << 20) + 1), "64MiB");
  EXPECT_EQ(metrics::SizeBucket((int64_t{1} << 30) - 1), "256MiB");
  EXPECT_EQ(metrics::SizeBucket(int64_t{1} << 30), "1GiB");
  EXPECT_EQ(metrics::SizeBucket(int64_t{1} << 40), "1GiB");
}

TEST_F(AgentMetricsTest, EverySeriesStartsAtZero) {
  std::map<std::string, double> s = Samples(registry_);
  EXPECT_EQ(s.at("reshard_plan_executions_total{result=ok}"), 0);
  EXPECT_EQ(s.at("reshard_plan_executions_total{result=failed}"), 0);
  for (ErrorKind kind : kAllErrorKinds) {
    EXPECT_EQ(s.at("reshard_executor_errors_total{kind=" +
                   std::string(ErrorKindName(kind)) + "}"),
              0);
  }
}

TEST_F(AgentMetricsTest, AValidatedRunRecordsItsStepsAndResult) {
  metrics_.RecordRun(SetupOf(mesh_, plan_), report_);
  metrics_.RecordRun(SetupOf(mesh_, plan_), report_);
  std::map<std::string, double> s = Samples(registry_);
  const std::string labels = "{group=A,op=all_gather}";
  // 8x6 f32 gathered: 192 bytes, 4 executions per run, 2 runs.
  EXPECT_EQ(s.at("reshard_collective_bytes_total" + labels), 192.0 * 4 * 2);
  EXPECT_EQ(s.at("reshard_collective_duration_seconds" + labels + "count"), 2);
  EXPECT_DOUBLE_EQ(s.at("reshard_collective_duration_seconds" + labels + "sum"),
                   0.004);
  // algbw 192 B / 2 ms = 96 kB/s; busbw = algbw x (n-1)/n for n = 2.
  // Its series also names the group's size and the message's size bucket.
  EXPECT_DOUBLE_EQ(
      s.at("reshard_collective_busbw_gbytes_per_second{group=A,group_size=2,"
           "op=all_gather,size=1KiB}"),
      192.0 / 0.002 / 1e9 / 2);
  EXPECT_EQ(s.count("reshard_collective_busbw_gbytes_per_second" + labels), 0u);
  EXPECT_EQ(s.at("reshard_plan_executions_total{result=ok}"), 2);
}

TEST_F(AgentMetricsTest, FailuresCountByKindAndUnrunStepsAreSkipped) {
  report_.status = absl::UnavailableError("peer 3 closed the connection");
  report_.seconds_median.clear();
  metrics_.RecordRun(SetupOf(mesh_, plan_), report_);
  report_.status = absl::OkStatus();
  report_.tensors = {{0, false, "element 0 differs", {}}};
  report_.seconds_median = {0.002};
  metrics_.RecordRun(SetupOf(mesh_, plan_), report_);
  metrics_.RecordRefusal(MarkErrorKind(absl::FailedPreconditionError("digest"),
                                       ErrorKind::kDigestMismatch));
  std::map<std::string, double> s = Samples(registry_);
  EXPECT_EQ(s.at("reshard_plan_executions_total{result=failed}"), 3);
  EXPECT_EQ(s.at("reshard_plan_executions_total{result=ok}"), 0);
  EXPECT_EQ(s.at("reshard_executor_errors_total{kind=peer}"), 1);
  EXPECT_EQ(s.at("reshard_executor_errors_total{kind=validation}"), 1);
  EXPECT_EQ(s.at("reshard_executor_errors_total{kind=digest_mismatch}"), 1);
  // Only the run that timed its step observed it.
  EXPECT_EQ(s.at("reshard_collective_duration_seconds{group=A,op=all_gather}"
                 "count"),
            1);
}

TEST_F(AgentMetricsTest, GroupLabelsAreCappedPerProcess) {
  // Meshes whose dims have distinct names: the 65th group is `other`.
  for (int i = 0; i <= static_cast<int>(metrics::LabelCap::kGroupCap); ++i) {
    const std::string name = "D" + std::to_string(i);
    MeshSpec spec;
    spec.shape = {2, 2};
    spec.dim_names = {name, "B"};
    const Mesh mesh = *Mesh::Create(spec);
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh, {8, 6}, "S(0),R", "R,R", PlanOptions());
    ASSERT_TRUE(plan.ok()) << plan.status();
    metrics_.RecordRun(SetupOf(mesh, *plan), report_);
  }
  std::map<std::string, double> s = Samples(registry_);
  EXPECT_EQ(s.count("reshard_collective_bytes_total{group=D63,op=all_gather}"),
            1u);
  EXPECT_EQ(s.count("reshard_collective_bytes_total{group=D64,op=all_gather}"),
            0u);
  EXPECT_EQ(s.at("reshard_collective_bytes_total{group=other,op=all_gather}"),
            192.0 * 4);
}

// Two f32 tensors S(0),R -> R,R on 2x2, bucketed: one all_gather over A.
executor::BatchWork TwoTensorBatch(const Mesh& mesh) {
  executor::BatchWork work;
  for (std::vector<int64_t> shape : {std::vector<int64_t>{8, 6}, {4, 6}}) {
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh, shape, "S(0),R", "R,R", PlanOptions());
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (plan.ok()) work.plans.push_back(*plan);
  }
  absl::StatusOr<BucketSchedule> rows =
      ScheduleBuckets(mesh, work.PlanPointers(), BucketOptions());
  EXPECT_TRUE(rows.ok()) << rows.status();
  if (rows.ok()) work.schedule = *rows;
  work.names = {"w", "b"};
  return work;
}

v1::RunWork BatchRunWork(const Mesh& mesh, const executor::BatchWork& work) {
  v1::RunWork run;
  *run.mutable_mesh() = proto::MeshToProto(mesh);
  proto::BatchWorkToProto(mesh, work, run.mutable_batch());
  run.set_run_id("run-2");
  run.set_comm_prefix("job/1/run-2");
  run.set_digest(work.Digest(mesh));
  return run;
}

TEST(PrepareRunTest, ABatchIsReadWithItsRowsAndItsDigestChecked) {
  const Mesh mesh = testing::MakeMesh({2, 2});
  const executor::BatchWork work = TwoTensorBatch(mesh);
  ASSERT_EQ(work.schedule.buckets.size(), 1u);
  v1::RunWork run = BatchRunWork(mesh, work);
  absl::StatusOr<RunSetup> setup = PrepareRun(run, 4);
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_FALSE(setup->work.single_plan);
  EXPECT_EQ(setup->work.plans.size(), 2u);
  EXPECT_EQ(setup->work.schedule.buckets[0].members.size(), 2u);
  EXPECT_TRUE(setup->work.bucketed);

  run.set_digest(work.Digest(mesh) ^ 1);
  setup = PrepareRun(run, 4);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(ErrorKindOf(setup.status()), ErrorKind::kDigestMismatch);
  EXPECT_NE(setup.status().message().find("batch digest mismatch"),
            std::string::npos)
      << setup.status();

  // Rows that leave a tensor's step out are not a schedule of the plans.
  run = BatchRunWork(mesh, work);
  run.mutable_batch()
      ->mutable_batch()
      ->mutable_buckets(0)
      ->mutable_members()
      ->RemoveLast();
  setup = PrepareRun(run, 4);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(setup.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(setup.status().message(), "run.batch."))
      << setup.status();

  // A batch runs whole: an item without a plan is refused, naming it.
  run = BatchRunWork(mesh, work);
  v1::BatchItemError* error =
      run.mutable_batch()->mutable_batch()->add_errors();
  error->set_item(1);
  error->set_code(3);
  error->set_message("items[1].src: bad");
  setup = PrepareRun(run, 4);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(setup.status().message(),
            "run.batch.errors: item 1 has no plan (a batch runs whole): "
            "items[1].src: bad");
}

TEST_F(AgentMetricsTest, ABatchRecordsItsBucketsAndItsResult) {
  RunSetup setup = SetupOf(mesh_, plan_);
  setup.work = TwoTensorBatch(mesh_);
  ASSERT_EQ(setup.work.schedule.buckets.size(), 1u);
  executor::RankReport report;
  report.seconds_min = {0.001};
  report.seconds_median = {0.004};
  report.tensors = {{1, true, "", {}}, {2, true, "", {}}};
  metrics_.RecordRun(setup, report);
  report.tensors[1] = {2, false, "element 3 differs", {}};
  metrics_.RecordRun(setup, report);
  std::map<std::string, double> s = Samples(registry_);
  const std::string labels = "{group=A,op=all_gather}";
  // 8x6 and 4x6 f32 gathered in one bucket: 288 bytes, 4 executions, 2 runs.
  EXPECT_EQ(s.at("reshard_collective_bytes_total" + labels), 288.0 * 4 * 2);
  EXPECT_EQ(s.at("reshard_collective_duration_seconds" + labels + "count"), 2);
  EXPECT_EQ(s.at("reshard_plan_executions_total{result=ok}"), 1);
  EXPECT_EQ(s.at("reshard_executor_errors_total{kind=validation}"), 1);
}

TEST(AgentMetricsFlagsTest, APortFileNeedsAnAddressAndMustBeWritable) {
  AgentFlagValues flags;
  flags.server = "127.0.0.1:50051";
  flags.job = "j";
  flags.rank = "0";
  flags.world_size = "1";
  flags.metrics_port_file = "/tmp/reshard-agent-metrics-port";
  absl::StatusOr<AgentConfig> config = ParseAgentFlags(flags);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "--metrics_port_file: needs --metrics_listen");
  flags.metrics_listen = "127.0.0.1:0";
  flags.metrics_port_file = "/nonexistent-dir/port";
  config = ParseAgentFlags(flags);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find(
                "--metrics_port_file=/nonexistent-dir/port: cannot write"),
            std::string::npos)
      << config.status();
  flags.metrics_port_file = "";
  config = ParseAgentFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics_listen, "127.0.0.1:0");
}

// A cross-mesh RunWork (docs/DESIGN.md §9): 2 ranks' S(0) to 2 other
// ranks' S(1) of an 8x4 float32 tensor, over the job's 4 ranks.
v1::RunWork CrossRunWork(const executor::CrossWork& work) {
  v1::RunWork run;
  *run.mutable_mesh() = proto::MeshToProto(*Mesh::Create({{4}, {"ranks"}, {}}));
  proto::CrossPlanToProto(work.src_mesh, work.dst_mesh, work.plan, 0,
                          run.mutable_cross());
  run.set_run_id("run-3");
  run.set_comm_prefix("job/1/run-3");
  run.set_digest(work.Digest());
  return run;
}

executor::CrossWork DisjointMove() {
  const Mesh src = *Mesh::Create({{2}, {"a"}, {0, 1}});
  const Mesh dst = *Mesh::Create({{2}, {"b"}, {2, 3}});
  CrossMeshRequest request{*TensorSpec::Create({8, 4}, DType::kFloat32),
                           *ParseDistState("S(0)", 1, 2, "src"),
                           *ParseDistState("S(1)", 1, 2, "dst")};
  absl::StatusOr<CrossMeshPlan> plan = MakeCrossMeshPlan(src, dst, request);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return {src, dst, *plan};
}

TEST(PrepareRunTest, ACrossMeshRunIsReadWithItsTransfersAndItsDigestChecked) {
  const executor::CrossWork work = DisjointMove();
  v1::RunWork run = CrossRunWork(work);
  ASSERT_EQ(run.cross().transfers_size(), 0);  // each agent expands its own
  absl::StatusOr<RunSetup> setup = PrepareRun(run, 4);
  ASSERT_TRUE(setup.ok()) << setup.status();
  ASSERT_NE(setup->cross, nullptr);
  ASSERT_EQ(setup->cross->items.size(), 1u);
  EXPECT_EQ(setup->cross->items[0].plan.transfers, work.plan.transfers);
  EXPECT_EQ(setup->cross->digest, work.Digest());

  run.set_digest(work.Digest() ^ 1);
  setup = PrepareRun(run, 4);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(ErrorKindOf(setup.status()), ErrorKind::kDigestMismatch);
  EXPECT_TRUE(absl::StartsWith(setup.status().message(),
                               "cross-mesh plan digest mismatch"))
      << setup.status();

  run = CrossRunWork(work);
  *run.mutable_mesh() =
      proto::MeshToProto(*Mesh::Create({{4}, {"r"}, {1, 0, 2, 3}}));
  EXPECT_EQ(PrepareRun(run, 4).status().message(),
            "run.mesh: not the cross plan's ranks, ascending");
  run = CrossRunWork(work);
  run.add_tensors()->set_source("w");
  EXPECT_TRUE(PrepareRun(run, 4).ok());
  run.add_tensors()->set_source("v");
  EXPECT_EQ(PrepareRun(run, 4).status().message(),
            "run.tensors: a cross-mesh run moves one tensor");
}

// A prepared schedule (docs/DESIGN.md §9, "A static schedule"): the run
// that carries its plan keeps it; later runs name it alone and get the
// same plan, still checked against the Coordinator's digest.
TEST(PrepareRunTest, AScheduleIsKeptThenRunWithoutItsPlan) {
  const executor::CrossWork work = DisjointMove();
  KeptSchedules kept;
  v1::RunWork first = CrossRunWork(work);
  first.set_schedule_id("s1-1");
  first.set_generation(7);
  absl::StatusOr<RunSetup> setup = PrepareRun(first, 4, 0, &kept);
  ASSERT_TRUE(setup.ok()) << setup.status();
  ASSERT_NE(kept.Find("s1-1"), nullptr);
  EXPECT_EQ(kept.Find("s1-1")->work, setup->cross);  // shared, not copied

  v1::RunWork again = first;
  again.clear_cross();
  setup = PrepareRun(again, 4, 0, &kept);
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_EQ(setup->cross->items[0].plan.transfers, work.plan.transfers);
  again.set_digest(work.Digest() ^ 1);
  EXPECT_EQ(ErrorKindOf(PrepareRun(again, 4, 0, &kept).status()),
            ErrorKind::kDigestMismatch);

  again.set_digest(work.Digest());
  again.set_schedule_id("s1-2");
  const absl::Status unknown = PrepareRun(again, 4, 0, &kept).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(
      absl::StrContains(unknown.message(), "keeps no schedule \"s1-2\""))
      << unknown;
  EXPECT_TRUE(absl::StrContains(unknown.message(), "prepare again"));
  EXPECT_EQ(PrepareRun(again, 4).status().code(),
            absl::StatusCode::kFailedPrecondition);

  kept.Retain({"s1-1"}, 8);  // a new generation ends every schedule
  EXPECT_EQ(kept.Find("s1-1"), nullptr);
}

// A batch's schedule is kept whole: a later run naming it alone gets every
// tensor and the bound, and its bindings are one per tensor.
TEST(PrepareRunTest, ABatchScheduleIsKeptWholeThenRunWithoutItsPlans) {
  const executor::CrossWork work = DisjointMove();
  v1::RunWork first = CrossRunWork(work);
  first.clear_cross();
  for (int t = 0; t < 2; ++t) {
    proto::CrossPlanToProto(work.src_mesh, work.dst_mesh, work.plan, 0,
                            first.add_cross_batch());
  }
  first.set_exchange_bytes(64);
  first.set_digest(executor::CrossBatchDigest({work, work}, 64));
  first.set_schedule_id("b1-1");
  KeptSchedules kept;
  absl::StatusOr<RunSetup> setup = PrepareRun(first, 4, 0, &kept);
  ASSERT_TRUE(setup.ok()) << setup.status();

  v1::RunWork again = first;
  again.clear_cross_batch();
  setup = PrepareRun(again, 4, 0, &kept);
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_TRUE(setup->cross->batch);
  EXPECT_EQ(setup->cross->items.size(), 2u);
  EXPECT_EQ(setup->cross->exchange_bytes, 64);
  for (int t = 0; t < 3; ++t) again.add_tensors()->set_source("w");
  EXPECT_EQ(PrepareRun(again, 4, 0, &kept).status().message(),
            "run.tensors: 3 bindings for 2 tensors");
  again.clear_tensors();
  again.set_digest(work.Digest());
  const absl::Status other = PrepareRun(again, 4, 0, &kept).status();
  EXPECT_EQ(ErrorKindOf(other), ErrorKind::kDigestMismatch);
  EXPECT_TRUE(absl::StartsWith(other.message(), "cross-mesh batch digest"))
      << other;
}

TEST(KeptSchedulesTest, KeepsOnlyListedSchedulesAndNeverMoreThanTheBound) {
  KeptSchedules kept;
  auto work = std::make_shared<const executor::CrossRunWork>(
      executor::CrossRunWork::OfPlan(DisjointMove()));
  for (size_t i = 0; i < kMaxSchedulesPerJob + 3; ++i) {
    kept.Keep(absl::StrCat("s", i), 1, work);
    EXPECT_LE(kept.size(), kMaxSchedulesPerJob);
  }
  EXPECT_NE(kept.Find(absl::StrCat("s", kMaxSchedulesPerJob + 2)), nullptr);
  kept.Retain({"s17", "s18", "nope"}, 1);
  EXPECT_EQ(kept.size(), 2u);
  EXPECT_NE(kept.Find("s18"), nullptr);
  kept.Retain({}, 1);
  EXPECT_EQ(kept.size(), 0u);
}

TEST_F(AgentMetricsTest, ACrossMeshRunCountsItsTransfers) {
  const executor::CrossWork work = DisjointMove();
  RunSetup setup = SetupOf(mesh_, plan_);
  setup.cross = std::make_shared<const executor::CrossRunWork>(
      executor::CrossRunWork::OfPlan(work));
  executor::RankReport report;
  report.rank = 0;
  report.executions_done = 4;
  report.seconds_median = {0, 0.003, 0};
  metrics_.RecordRun(setup, report);
  std::map<std::string, double> s = Samples(registry_);
  EXPECT_EQ(s["reshard_transfer_bytes_total{direction=sent}"],
            4.0 * work.SentBytes(0));
  EXPECT_GT(work.SentBytes(0), 0);
  EXPECT_EQ(s["reshard_transfer_bytes_total{direction=received}"], 0);
  EXPECT_EQ(s["reshard_transfer_duration_seconds{}count"], 1);
  EXPECT_EQ(s["reshard_transfer_duration_seconds{}sum"], 0.003);
  // Rank 0 is a source only: it ran, and has no result to judge.
  EXPECT_EQ(s["reshard_plan_executions_total{result=ok}"], 1);
}

}  // namespace
}  // namespace reshard::agent
