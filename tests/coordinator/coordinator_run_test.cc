// Runs through the Coordinator's core with in-process stand-in agents:
// dispatch and collection, waits for joining ranks, failures, cancellation,
// progress, batches and the run history.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/run_failure.h"
#include "coordinator/coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_cases.h"
#include "tests/coordinator/stand_in_agents.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;

TEST_F(CoordinatorTest, RunsDispatchCollectAndLeaveNoKeysBehind) {
  StartJob("j", 4, 3);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<RunOutcome> out = c_.RunJob("j", SpecFor(4), Soon(), {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->summary.validated);
    ASSERT_EQ(out->summary.tensors.size(), 1u);
    EXPECT_EQ(out->summary.tensors[0].checksums,
              (std::vector<uint64_t>{1000, 1001, 1002, 1003}));
    ASSERT_EQ(out->summary.rows.size(), 1u);
    EXPECT_EQ(out->summary.rows[0].seconds_median, 2e-3);
    const JobSnapshot info = *c_.GetJob("j");
    EXPECT_EQ(info.store_keys, 0);
    EXPECT_EQ(info.store_bytes, 0);
    EXPECT_EQ(info.runs_total, i + 1);
  }
}

TEST_F(CoordinatorTest, ARunWaitsForAgentsStillJoining) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 2)).ok());
  agents_.emplace_back(ServeRank, std::ref(c_), Id("j", 0, 100), 2, 1,
                       Behaviour());
  agents_.emplace_back([this] {  // joined at TearDown, after Shutdown
    absl::StatusOr<RunOutcome> out = c_.RunJob("j", SpecFor(2), Soon(), {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->summary.validated);
  });
  // The call waits in the job while rank 1 is missing; then rank 1 comes.
  ASSERT_TRUE(AwaitJob("j", [](const JobSnapshot& info) {
    return info.run_calls == 1 && info.state == "joining";
  }));
  ASSERT_TRUE(c_.Join(Joining("j", 1, 2)).ok());
  ServeRank(c_, Id("j", 1, 101), 2, 1, Behaviour());
  EXPECT_TRUE(AwaitJob("j", [](const JobSnapshot& info) {
    return info.runs_total == 1 && info.runs_failed == 0;
  }));
}

TEST_F(CoordinatorTest, ANotReadyJobFailsAtTheDeadlineNamingTheAbsentRanks) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 3)).ok());
  ASSERT_TRUE(c_.Join(Joining("j", 2, 3)).ok());
  absl::StatusOr<RunOutcome> out =
      c_.RunJob("j", SpecFor(3), absl::Now() + absl::Milliseconds(200), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(),
              HasSubstr("was not ready by the deadline: ranks 0, 1, 2 have "
                        "not joined or are not connected (world size 3, as "
                        "its agents' --world_size says)"));
  const std::vector<RankFailure> ranks = RankFailuresOf(out.status());
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks[0], (RankFailure{0, "127.0.0.1", "not_connected",
                                   "joined, not connected"}));
  EXPECT_EQ(ranks[1], (RankFailure{1, "", "not_joined", "never joined"}));
}

// An agent refused at Join for another world size cannot make the job
// ready: a run waiting for its rank fails at once, naming it, rather than
// at the deadline; once an agent of that rank joins, the note is gone.
TEST_F(CoordinatorTest, ARankWhoseAgentWasRefusedFailsTheRunAtOnce) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 3)).ok());
  ASSERT_TRUE(c_.Join(Joining("j", 2, 3)).ok());
  const absl::Status refused = c_.Join(Joining("j", 1, 4)).status();
  ASSERT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  const absl::Time start = absl::Now();
  absl::StatusOr<RunOutcome> out =
      c_.RunJob("j", SpecFor(3), absl::Now() + absl::Seconds(60), {});
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(out.status().message(),
              HasSubstr("job \"j\" cannot be ready: an agent was refused at "
                        "Join (restart it with the job's flags): rank 1: job "
                        "\"j\" has world size 3 and backend gloo; this agent "
                        "says 4 and gloo"));
  const std::vector<RankFailure> ranks = RankFailuresOf(out.status());
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].rank, 1);
  EXPECT_EQ(ranks[0].host, "127.0.0.1");
  EXPECT_EQ(ranks[0].kind, "refused_join");
  ASSERT_TRUE(c_.Join(Joining("j", 1, 3)).ok());
  out = c_.RunJob("j", SpecFor(3), absl::Now() + absl::Milliseconds(200), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded)
      << out.status();
}

TEST_F(CoordinatorTest, ALostRankIsNamedAheadOfPeersThatSawAnError) {
  StartJob("j", 3, 1, [](int64_t rank) {
    Behaviour how;
    how.rendezvous = false;
    if (rank == 1) how.vanish = true;
    if (rank == 2) how.fail = absl::UnavailableError("peer 1 closed");
    return how;
  });
  absl::StatusOr<RunOutcome> out = c_.RunJob("j", SpecFor(3), Soon(), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(out.status().message());
  EXPECT_THAT(message, HasSubstr("rank 1: its agent's dispatch stream closed"));
  EXPECT_THAT(message, HasSubstr("rank 2: peer 1 closed"));
  EXPECT_LT(message.find("rank 1"), message.find("rank 2"));
  EXPECT_EQ(c_.GetJob("j")->runs_failed, 1);
  // The same ranks, one entry each, for a scheduler to read.
  const std::vector<RankFailure> ranks = RankFailuresOf(out.status());
  ASSERT_EQ(ranks.size(), 2u) << out.status();
  EXPECT_EQ(ranks[0].rank, 1);
  EXPECT_EQ(ranks[0].host, "127.0.0.1");
  EXPECT_EQ(ranks[0].kind, "lost");
  EXPECT_THAT(ranks[0].message, HasSubstr("its agent's dispatch stream"));
  EXPECT_EQ(ranks[1], (RankFailure{2, "127.0.0.1", "peer", "peer 1 closed"}));
}

TEST_F(CoordinatorTest, AFailedRankFailsTheRunWithItsCode) {
  StartJob("j", 2, 1, [](int64_t rank) {
    Behaviour how;
    how.rendezvous = false;
    if (rank == 0) {
      how.fail = absl::DeadlineExceededError("steps[0] (all_gather on A)");
    }
    return how;
  });
  absl::StatusOr<RunOutcome> out = c_.RunJob("j", SpecFor(2), Soon(), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(),
              HasSubstr("rank 0: steps[0] (all_gather on A)"));
  ASSERT_EQ(RankFailuresOf(out.status()).size(), 1u);
  EXPECT_EQ(RankFailuresOf(out.status())[0].kind, "timeout");
}

TEST_F(CoordinatorTest, CancelJobEndsTheRunInFlight) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 1)).ok());
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox =
      c_.Connect(Id("j", 0, 100));
  ASSERT_TRUE(mailbox.ok());
  std::thread canceller([&] {
    std::optional<WorkItem> run = (*mailbox)->Pop(Soon());
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(*c_.CancelJob("j"), run->run->run_id);
    std::optional<WorkItem> cancel = (*mailbox)->Pop(Soon());
    ASSERT_TRUE(cancel.has_value());
    EXPECT_EQ(cancel->kind, WorkItem::Kind::kCancel);
  });
  absl::StatusOr<RunOutcome> out = c_.RunJob("j", SpecFor(1), Soon(), {});
  canceller.join();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(out.status().message(), HasSubstr("was cancelled (CancelJob)"));
  EXPECT_EQ(*c_.CancelJob("j"), "");
}
// A caller's Ctrl-C (CancelJob with stop): every agent is told to stop,
// reports what it measured, and RunJob returns those reports marked
// interrupted instead of failing; the run is recorded as cancelled.
TEST_F(CoordinatorTest, CancelJobStopReturnsWhatTheRanksMeasured) {
  const std::vector<std::shared_ptr<Mailbox>> mailboxes =
      ConnectedAgents(c_, "j", 2);
  ASSERT_EQ(mailboxes.size(), 2u);
  std::vector<std::thread> agents;
  for (int64_t r = 0; r < 2; ++r) {
    agents.emplace_back([&, r] {
      std::optional<WorkItem> run = mailboxes[r]->Pop(Soon());
      ASSERT_TRUE(run.has_value());
      if (r == 0) {
        EXPECT_EQ(*c_.CancelJob("j", true), run->run->run_id);
      }
      std::optional<WorkItem> cancel = mailboxes[r]->Pop(Soon());
      ASSERT_TRUE(cancel.has_value());
      EXPECT_EQ(cancel->kind, WorkItem::Kind::kCancel);
      executor::RankReport report;
      report.status = absl::CancelledError("stopped after 7 of 12 executions");
      report.executions_done = 7 - static_cast<int>(r);
      report.seconds_min = {0.001};
      report.seconds_median = {0.002 + 0.001 * static_cast<double>(r)};
      const AgentId id = Id("j", r, 100 + r);
      const absl::Status reported = JobFor(c_, id).Report(
          id, run->run->generation, run->run->run_id, report);
      EXPECT_TRUE(reported.ok()) << reported;
    });
  }
  absl::StatusOr<RunOutcome> out = c_.RunJob("j", SpecFor(2), Soon(), {});
  for (std::thread& t : agents) t.join();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->interrupted);
  ASSERT_EQ(out->reports.size(), 2u);
  EXPECT_EQ(out->reports[1].executions_done, 6);
  ASSERT_EQ(out->summary.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(out->summary.rows[0].seconds_median, 0.003);
  EXPECT_FALSE(out->summary.validated);
  const JobSnapshot job = *c_.GetJob("j");
  ASSERT_EQ(job.recent_runs.size(), 1u);
  EXPECT_EQ(job.recent_runs[0].result, "CANCELLED");
  EXPECT_EQ(job.recent_runs[0].error,
            "stopped by its caller after 6 executions");
}

// job show's progress: the executions every rank finished (the fewest), of
// warmup + iters, while the run is in flight; refused from a stale agent or
// for a run that is not in flight.
TEST_F(CoordinatorTest, ProgressIsTheFewestExecutionsAnyRankFinished) {
  const std::vector<std::shared_ptr<Mailbox>> mailboxes =
      ConnectedAgents(c_, "j", 2);
  ASSERT_EQ(mailboxes.size(), 2u);
  const AgentId a0 = Id("j", 0, 100), a1 = Id("j", 1, 101);
  EXPECT_EQ(JobFor(c_, a0).Progress(a0, "none", 1).code(),
            absl::StatusCode::kFailedPrecondition);
  std::thread agents([&] {
    std::optional<WorkItem> run = mailboxes[0]->Pop(Soon());
    ASSERT_TRUE(run.has_value());
    ASSERT_TRUE(mailboxes[1]->Pop(Soon()).has_value());
    const std::string id = run->run->run_id;
    EXPECT_TRUE(JobFor(c_, a0).Progress(a0, id, 5).ok());
    EXPECT_TRUE(JobFor(c_, a1).Progress(a1, id, 3).ok());
    EXPECT_TRUE(JobFor(c_, a1).Progress(a1, id, 2).ok());  // never goes back
    const AgentId stale = Id("j", 1, 7);
    EXPECT_EQ(JobFor(c_, a1).Progress(stale, id, 9).code(),
              absl::StatusCode::kFailedPrecondition);
    const JobSnapshot job = *c_.GetJob("j");
    EXPECT_EQ(job.current_run, id);
    EXPECT_EQ(job.current_run_progress.executions_done, 3);
    EXPECT_EQ(job.current_run_progress.executions_total,
              executor::TotalExecutions(run->run->spec->warmup,
                                        run->run->spec->iters));
    EXPECT_GE(job.current_run_progress.seconds, 0);
    EXPECT_TRUE(c_.CancelJob("j").ok());
  });
  absl::StatusOr<RunOutcome> out = c_.RunJob("j", SpecFor(2), Soon(), {});
  agents.join();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(c_.GetJob("j")->current_run_progress.executions_total, 0);
}
TEST_F(CoordinatorTest, RunJobChecksTheSpecAgainstTheJob) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 2)).ok());
  absl::StatusOr<RunOutcome> wrong = c_.RunJob("j", SpecFor(4), Soon(), {});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(),
              HasSubstr("mesh: world size 4 differs from job \"j\"'s world "
                        "size 2"));
  EXPECT_EQ(c_.RunJob("nobody", SpecFor(2), Soon(), {}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(CoordinatorTest, ABatchRunAggregatesItsRowsAndNamedTensors) {
  StartJob("b", 2, 1);
  absl::StatusOr<RunOutcome> out = c_.RunJob("b", BatchSpecFor(2), Soon(), {});
  ASSERT_TRUE(out.ok()) << out.status();
  const executor::RunSummary& s = out->summary;
  EXPECT_TRUE(s.validated);
  ASSERT_EQ(out->reports.size(), 2u);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].members, 2);
  EXPECT_EQ(s.rows[0].seconds_median, 2e-3);
  EXPECT_EQ(s.seconds_median, 3e-3);
  ASSERT_EQ(s.tensors.size(), 2u);
  EXPECT_EQ(s.tensors[0].name, "w");
  EXPECT_EQ(s.tensors[1].name, "b");
  EXPECT_EQ(s.tensors[1].checksums, (std::vector<uint64_t>{2010, 2011}));
  EXPECT_EQ(c_.GetJob("b")->recent_runs.back().result, "validated");
}

TEST_F(CoordinatorTest, AReportOfAnotherTensorCountIsRefused) {
  StartJob("k", 2, 1, [](int64_t) {
    Behaviour how;
    how.wrong_count = true;
    return how;
  });
  // The refused reports never count: the stand-ins leave without one.
  absl::StatusOr<RunOutcome> out = c_.RunJob("k", BatchSpecFor(2), Soon(), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnavailable)
      << out.status();
  EXPECT_THAT(out.status().message(),
              HasSubstr("rank 0: its agent's dispatch stream closed"));
}

TEST_F(CoordinatorTest, ABatchNeedsOneNamePerItem) {
  ASSERT_TRUE(c_.Join(Joining("n", 0, 2)).ok());
  RunSpec spec = *BatchSpecFor(2);
  spec.work.names.pop_back();
  absl::StatusOr<RunOutcome> out = c_.RunJob(
      "n", std::make_shared<const RunSpec>(std::move(spec)), Soon(), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "names: 1 names for 2 plans");
}

// A job lists its last kRecentRuns runs, oldest first (fault_test checks
// a failed one's code and message).
TEST_F(CoordinatorTest, AJobKeepsItsLastSixteenRuns) {
  const int runs = static_cast<int>(kRecentRuns) + 4;
  StartJob("hist", 2, runs);
  std::vector<std::string> ids;
  for (int i = 0; i < runs; ++i) {
    absl::StatusOr<RunOutcome> outcome =
        c_.RunJob("hist", SpecFor(2), Soon(), nullptr);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    ids.push_back(outcome->run_id);
  }
  absl::StatusOr<JobSnapshot> info = c_.GetJob("hist");
  ASSERT_TRUE(info.ok());
  ASSERT_EQ(info->recent_runs.size(), kRecentRuns);
  for (size_t i = 0; i < kRecentRuns; ++i) {
    EXPECT_EQ(info->recent_runs[i].run_id, ids[runs - kRecentRuns + i]);
    EXPECT_EQ(info->recent_runs[i].result, "validated");
  }
}

}  // namespace
}  // namespace reshard::coordinator
