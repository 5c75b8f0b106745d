// Runs on registered tensors in the Coordinator's core (docs/DESIGN.md
// §6.6), with agents driven by hand through their mailboxes: only capable
// agents run them, the commit goes out only once every rank ran and
// validated, and a commit that fails names each rank.
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/error_kind.h"
#include "common/run_failure.h"
#include "common/tensor_name.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/stand_in_agents.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kWorld = 2;

std::shared_ptr<const RunSpec> TensorSpec(bool staging = true) {
  RunSpec spec = *SpecFor(kWorld);
  spec.iters = 1;
  spec.warmup = 0;
  spec.tensors = {{"w", "w.out"}};
  spec.no_staging = !staging;
  return std::make_shared<const RunSpec>(std::move(spec));
}

class CommitTest : public ::testing::Test {
 protected:
  // Joins and connects every rank; `capable(r)` says whether rank r
  // advertises registered tensors.
  void Connect(const std::function<bool(int64_t)>& capable = nullptr) {
    for (int64_t r = 0; r < kWorld; ++r) {
      JoinInfo info = Joining("j", r, kWorld);
      if (!capable || capable(r)) info.capabilities = {kRegisteredTensors};
      ASSERT_TRUE(c_.Join(info).ok());
      absl::StatusOr<std::shared_ptr<Mailbox>> m =
          c_.Connect(Id("j", r, 100 + r));
      ASSERT_TRUE(m.ok()) << m.status();
      mailboxes_.push_back(*m);
    }
  }
  // RunJob on its own thread; its result once joined.
  void StartRun(std::shared_ptr<const RunSpec> spec) {
    runner_ = std::thread([this, spec] {
      outcome_ = c_.RunJob("j", spec, absl::Now() + absl::Seconds(10), nullptr);
    });
  }
  absl::StatusOr<RunOutcome> Finish() {
    runner_.join();
    return *outcome_;
  }
  // The next work item of rank `r` (bounded).
  std::optional<WorkItem> Next(int64_t r, double seconds = 10) {
    return mailboxes_[r]->Pop(absl::Now() + absl::Seconds(seconds));
  }
  // Rank r takes the run and reports it, validated or not.
  std::string Report(int64_t r, bool validated = true) {
    std::optional<WorkItem> item = Next(r);
    EXPECT_TRUE(item.has_value() && item->kind == WorkItem::Kind::kRun);
    if (!item.has_value() || item->run == nullptr) return "";
    const AgentId id = Id("j", r, 100 + r);
    executor::RankReport report = ReportOf(*item->run, r, Behaviour());
    report.tensors[0].validated = validated;
    report.tensors[0].conservation = "exact";
    EXPECT_TRUE(JobFor(c_, id)
                    .Report(id, item->run->generation, item->run->run_id,
                            std::move(report))
                    .ok());
    return item->run->run_id;
  }
  // Rank r takes the run and reports `status` (not OK): what ran, its
  // comm_prefix.
  std::string Fail(int64_t r, absl::Status status) {
    std::optional<WorkItem> item = Next(r);
    EXPECT_TRUE(item.has_value() && item->kind == WorkItem::Kind::kRun);
    if (!item.has_value() || item->run == nullptr) return "";
    const AgentId id = Id("j", r, 100 + r);
    executor::RankReport report;
    report.rank = r;
    report.status = std::move(status);
    EXPECT_TRUE(JobFor(c_, id)
                    .Report(id, item->run->generation, item->run->run_id,
                            std::move(report))
                    .ok());
    return item->run->comm_prefix;
  }
  // Rank r takes the commit of `run_id` and answers `result`.
  void Commit(int64_t r, const std::string& run_id, absl::Status result) {
    std::optional<WorkItem> item = Next(r);
    ASSERT_TRUE(item.has_value());
    ASSERT_EQ(item->kind, WorkItem::Kind::kCommit);
    EXPECT_EQ(item->run_id, run_id);
    const AgentId id = Id("j", r, 100 + r);
    EXPECT_TRUE(JobFor(c_, id).Committed(id, run_id, std::move(result)).ok());
  }
  void TearDown() override {
    if (runner_.joinable()) runner_.join();
    c_.Shutdown("test over");
  }

  CoordinatorLimits limits_;
  Coordinator c_{limits_, SystemClock(), TestSessions()};
  std::vector<std::shared_ptr<Mailbox>> mailboxes_;
  std::thread runner_;
  std::optional<absl::StatusOr<RunOutcome>> outcome_;
  std::string prefix_;
};

TEST_F(CommitTest, AgentsWithoutTheCapabilityAreRefusedNamingThem) {
  Connect([](int64_t r) { return r == 1; });
  absl::StatusOr<RunOutcome> outcome =
      c_.RunJob("j", TensorSpec(), absl::Now() + absl::Seconds(5), nullptr);
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcome.status().message(),
            "tensors: the agent of rank 0 does not advertise "
            "\"registered_tensors\" (start them with --tensor_socket, backend "
            "gloo)");
  ASSERT_EQ(RankFailuresOf(outcome.status()).size(), 1u);
  EXPECT_EQ(RankFailuresOf(outcome.status())[0].kind, "incapable");
  EXPECT_FALSE(Next(0, 0.2).has_value());  // nothing was dispatched
}

// A cross-mesh batch from rank 0 to rank 1 (or, with `to_self`, to rank
// 0: a batch that leaves rank 1 out).
std::shared_ptr<const RunSpec> CrossBatchSpec(bool to_self = false) {
  RunSpec spec = *SpecFor(kWorld);
  for (int t = 0; t < 2; ++t) {
    spec.cross_batch.push_back({*Mesh::Create({{1}, {"a"}, {0}}),
                                *Mesh::Create({{1}, {"b"}, {to_self ? 0 : 1}}),
                                CrossMeshPlan()});
    spec.cross_names.push_back(absl::StrCat("w", t));
  }
  spec.exchange_bytes = 1024;
  return std::make_shared<const RunSpec>(std::move(spec));
}

TEST_F(CommitTest, ACrossBatchNeedsAgentsThatAdvertiseIt) {
  Connect();
  absl::StatusOr<RunOutcome> outcome =
      c_.RunJob("j", CrossBatchSpec(), absl::Now() + absl::Seconds(5), nullptr);
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcome.status().message(),
            "cross_batch: the agents of ranks 0, 1 do not advertise "
            "\"cross_mesh_batches\" (an older agent, or a device backend)");
  EXPECT_EQ(RankFailuresOf(outcome.status()).size(), 2u);
  EXPECT_FALSE(Next(0, 0.2).has_value());  // nothing was dispatched
}

TEST_F(CommitTest, ACrossBatchMustCoverTheJobsRanks) {
  Connect();
  absl::StatusOr<RunOutcome> outcome = c_.RunJob(
      "j", CrossBatchSpec(true), absl::Now() + absl::Seconds(5), nullptr);
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outcome.status().message()),
              ::testing::HasSubstr("cross_batch: the tensors' rank maps hold "
                                   "1 ranks up to 0; job \"j\"'s are 0 to 1"));
}

TEST_F(CommitTest, CommitsOnceEveryRankValidated) {
  Connect();
  StartRun(TensorSpec());
  const std::string run = Report(0);
  // One rank reported: no commit yet.
  EXPECT_FALSE(Next(0, 0.2).has_value());
  Report(1);
  Commit(0, run, absl::OkStatus());
  Commit(1, run, absl::OkStatus());
  absl::StatusOr<RunOutcome> outcome = Finish();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->committed);
  EXPECT_TRUE(outcome->summary.validated);
  EXPECT_EQ(outcome->summary.tensors[0].conservation, "exact");
}

TEST_F(CommitTest, ARankThatDidNotValidateMeansNoCommit) {
  Connect();
  StartRun(TensorSpec());
  Report(0);
  Report(1, /*validated=*/false);
  absl::StatusOr<RunOutcome> outcome = Finish();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->committed);
  EXPECT_FALSE(outcome->summary.validated);
  EXPECT_FALSE(Next(0, 0.2).has_value());
  EXPECT_FALSE(Next(1, 0.2).has_value());
}

// Rank 1 refused its tensors in pre-flight (docs/DESIGN.md §6.4); rank 0
// only saw that. The run fails with rank 1's own code and message, kind
// binding, and keeps the communicators: the next run has the same
// comm_prefix. A run that failed in a collective changes it.
TEST_F(CommitTest, ARefusalInPreflightIsTheRefusersAndKeepsTheCommunicators) {
  Connect();
  for (int attempt = 0; attempt < 2; ++attempt) {
    StartRun(TensorSpec());
    const std::string prefix = Fail(
        0, absl::AbortedError("not run: ranks [1] refused their registered "
                              "tensors in pre-flight"));
    EXPECT_EQ(Fail(1, MarkErrorKind(absl::NotFoundError(
                                        "tensors[0].source: no tensor \"w\""),
                                    ErrorKind::kBinding)),
              prefix);
    absl::StatusOr<RunOutcome> outcome = Finish();
    EXPECT_EQ(outcome.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(outcome.status().message()),
                ::testing::EndsWith(
                    " failed: rank 1: tensors[0].source: no tensor \"w\""));
    const std::vector<RankFailure> ranks = RankFailuresOf(outcome.status());
    ASSERT_EQ(ranks.size(), 1u);
    EXPECT_EQ(ranks[0].rank, 1);
    EXPECT_EQ(ranks[0].kind, "binding");
    if (attempt == 0) prefix_ = prefix;
    EXPECT_EQ(prefix, prefix_) << "attempt " << attempt;
  }
  StartRun(TensorSpec());
  Fail(0, absl::UnavailableError("connection closed by peer"));
  Fail(1, absl::UnavailableError("connection closed by peer"));
  EXPECT_EQ(Finish().status().code(), absl::StatusCode::kUnavailable);
  StartRun(TensorSpec());
  EXPECT_NE(Fail(0, absl::UnavailableError("again")), prefix_);
  Fail(1, absl::UnavailableError("again"));
  EXPECT_FALSE(Finish().ok());
}

TEST_F(CommitTest, ACommitThatFailsNamesTheRank) {
  Connect();
  StartRun(TensorSpec());
  const std::string run = Report(0);
  Report(1);
  Commit(0, run, absl::OkStatus());
  Commit(1, run, absl::FailedPreconditionError("w.out was replaced"));
  absl::StatusOr<RunOutcome> outcome = Finish();
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcome.status().message(),
            absl::StrCat("run ", run,
                         " validated on every rank but its commit failed: "
                         "rank 1: w.out was replaced"));
  const std::vector<RankFailure> ranks = RankFailuresOf(outcome.status());
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].rank, 1);
  EXPECT_EQ(ranks[0].kind, "commit");
}

TEST_F(CommitTest, ARankLostDuringTheCommitIsNamed) {
  Connect();
  StartRun(TensorSpec());
  const std::string run = Report(0);
  Report(1);
  Commit(0, run, absl::OkStatus());
  ASSERT_TRUE(Next(1).has_value());  // the commit, never answered
  c_.Disconnect(Id("j", 1, 101), mailboxes_[1]);
  absl::StatusOr<RunOutcome> outcome = Finish();
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(outcome.status().message(),
              HasSubstr("rank 1: lost during the commit: its agent's "
                        "dispatch stream closed"));
}

TEST_F(CommitTest, WithoutStagingNothingIsCommitted) {
  Connect();
  StartRun(TensorSpec(/*staging=*/false));
  Report(0);
  Report(1);
  absl::StatusOr<RunOutcome> outcome = Finish();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->committed);
  EXPECT_FALSE(Next(0, 0.2).has_value());
}

}  // namespace
}  // namespace reshard::coordinator
