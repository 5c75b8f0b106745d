// Tests of the Coordinator's core (coordinator/): membership, generations
// and incarnations, the rendezvous store and its bounds, and runs driven by
// in-process stand-in agents (threads that pop their mailbox, meet in the
// store and report). The real agents over gRPC are in job_run_test.
#include "coordinator/coordinator.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/same_secret.h"
#include "common/version.h"
#include "coordinator/rendezvous_store.h"
#include "coordinator/store_budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/bucket_schedule.h"
#include "tests/coordinator/coordinator_cases.h"
#include "tests/planner/test_util.h"

namespace reshard::coordinator {
namespace {
// The job `id` names, for the calls an agent makes within its run (the
// test stops at once if there is none).
Job& JobFor(const Coordinator& c, const AgentId& id) {
  absl::StatusOr<std::shared_ptr<Job>> job = c.JobOf(id);
  if (!job.ok()) {
    ADD_FAILURE() << job.status();
    std::abort();
  }
  return **job;
}

namespace testing_wait {

// Waits (bounded) until `job` exists and `done` holds for it.
bool AwaitJob(const Coordinator& c, const std::string& job,
              const std::function<bool(const JobSnapshot&)>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    absl::StatusOr<JobSnapshot> info = c.GetJob(job);
    if (info.ok() && done(*info)) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return false;
}

}  // namespace testing_wait

using ::testing::HasSubstr;
using ::testing::Not;

// Two tensors S(0) -> R on a 1-D mesh of `world` ranks, bucketed: one
// all_gather of both.
std::shared_ptr<const RunSpec> BatchSpecFor(int64_t world) {
  Mesh mesh = testing::MakeMesh({world});
  executor::BatchWork work;
  for (int64_t n : {8, 5}) {
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh, {n}, "S(0)", "R", PlanOptions());
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (plan.ok()) work.plans.push_back(*std::move(plan));
  }
  absl::StatusOr<BucketSchedule> rows =
      ScheduleBuckets(mesh, work.PlanPointers(), BucketOptions());
  EXPECT_TRUE(rows.ok()) << rows.status();
  if (rows.ok()) work.schedule = *std::move(rows);
  work.names = {"w", "b"};
  return std::make_shared<const RunSpec>(
      RunSpec{std::move(mesh), std::move(work), 3, 1, 5});
}

// How a stand-in agent answers a run.
struct Behaviour {
  bool rendezvous = true;    // set its key, wait for every rank's
  absl::Status fail;         // reported as the run's failure
  bool vanish = false;       // close its stream instead of reporting
  bool wrong_count = false;  // one tensor more than the run has
};

// A stand-in's report: a plan's (checksum 1000 + rank) or a batch's (tensor
// t's checksum 2000 + 10 t + rank), every row 2 ms.
executor::RankReport ReportOf(const RunWork& run, int64_t rank,
                              const Behaviour& how) {
  const executor::BatchWork& work = run.spec->work;
  executor::RankReport report;
  report.status = how.fail;
  const size_t rows = work.Rows(run.spec->mesh).size();
  report.seconds_min.assign(rows, 1e-3);
  report.seconds_median.assign(rows, 2e-3);
  report.total_seconds_min = report.total_seconds_median = 3e-3;
  const size_t tensors = work.plans.size() + (how.wrong_count ? 1 : 0);
  for (size_t t = 0; t < tensors; ++t) {
    const uint64_t checksum =
        work.single_plan ? 1000 + rank : 2000 + 10 * t + rank;
    report.tensors.push_back({checksum, true, "", {}});
  }
  return report;
}

// One rank's stand-in: connects, then serves runs until its mailbox
// closes or `runs` runs were answered.
void ServeRank(Coordinator& c, AgentId id, int64_t world, int runs,
               Behaviour how) {
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox = c.Connect(id);
  ASSERT_TRUE(mailbox.ok()) << mailbox.status();
  for (int served = 0; served < runs;) {
    std::optional<WorkItem> item =
        (*mailbox)->Pop(absl::Now() + absl::Seconds(10));
    if (!item.has_value()) break;
    if (item->kind != WorkItem::Kind::kRun) continue;
    ++served;
    const RunWork& run = *item->run;
    if (how.vanish) {
      c.Disconnect(id, *mailbox);
      return;
    }
    if (how.rendezvous) {
      const std::string mine = absl::StrCat(run.comm_prefix, "/", id.rank);
      EXPECT_TRUE(JobFor(c, id).StoreSet(id, run.run_id, mine, "addr").ok());
      std::vector<std::string> keys;
      for (int64_t r = 0; r < world; ++r) {
        keys.push_back(absl::StrCat(run.comm_prefix, "/", r));
      }
      EXPECT_TRUE(
          JobFor(c, id)
              .StoreGet(id, run.run_id, keys, absl::Now() + absl::Seconds(5))
              .ok());
    }
    const absl::Status reported = JobFor(c, id).Report(
        id, run.generation, run.run_id, ReportOf(run, id.rank, how));
    if (how.wrong_count) {
      EXPECT_EQ(reported.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(reported.message(), HasSubstr("report: 3 tensors for run "));
    } else {
      EXPECT_TRUE(reported.ok()) << reported;
    }
  }
  c.Disconnect(id, *mailbox);
}

class CoordinatorTest : public ::testing::Test {
 protected:
  // Joins ranks [0, world) of `job`; their stand-ins serve `runs` runs.
  void StartJob(const std::string& job, int64_t world, int runs,
                std::function<Behaviour(int64_t)> how = nullptr) {
    for (int64_t r = 0; r < world; ++r) {
      ASSERT_TRUE(c_.Join(Joining(job, r, world)).ok());
      agents_.emplace_back(ServeRank, std::ref(c_), Id(job, r, 100 + r), world,
                           runs, how ? how(r) : Behaviour());
    }
  }
  void TearDown() override {
    c_.Shutdown("test over");
    for (std::thread& t : agents_) t.join();
  }
  bool AwaitJob(const std::string& job,
                const std::function<bool(const JobSnapshot&)>& done) {
    return testing_wait::AwaitJob(c_, job, done);
  }
  absl::Time Soon(double seconds = 10) {
    return absl::Now() + absl::Seconds(seconds);
  }

  CoordinatorLimits limits_;
  Coordinator c_{limits_, SystemClock(), TestSessions()};
  std::vector<std::thread> agents_;
};

TEST_F(CoordinatorTest, JoinsCreateTheJobAndEachMembershipChangeBumpsIt) {
  EXPECT_EQ(c_.Join(Joining("j", 0, 2))->generation, 1);
  // The same process again, presenting its session: nothing changes.
  EXPECT_EQ(c_.Join(Joining("j", 0, 2))->generation, 1);
  EXPECT_EQ(c_.Join(Joining("j", 1, 2))->generation, 2);
  EXPECT_EQ(c_.GetJob("j")->state, "joining");  // nobody is connected yet
  EXPECT_EQ(c_.Join(Joining("j", 1, 2, 777))->generation, 3);  // replaced
  const JobSnapshot info = *c_.GetJob("j");
  EXPECT_EQ(info.world_size, 2);
  ASSERT_EQ(info.agents.size(), 2u);
  EXPECT_EQ(info.generation, 3);
}

TEST_F(CoordinatorTest, RefusesAnotherProtocolNamingBothVersions) {
  JoinInfo info = Joining("j", 0, 2);
  info.protocol = kCoordinatorProtocol + 1;
  info.version = "9.9.9";
  absl::StatusOr<Joined> joined = c_.Join(info);
  EXPECT_EQ(joined.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(joined.status().message(), HasSubstr("agent version 9.9.9"));
  EXPECT_THAT(joined.status().message(),
              HasSubstr(absl::StrCat("coordinator, version ", kReshardVersion,
                                     " (protocol ", kCoordinatorProtocol)));
  EXPECT_EQ(c_.GetJob("j").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CoordinatorTest, RefusesBadJoinsNamingTheField) {
  struct Case {
    JoinInfo info;
    absl::StatusCode code;
    std::string says;
  } cases[] = {
      {Joining("", 0, 2), absl::StatusCode::kInvalidArgument, "agent.job"},
      {Joining("a/b", 0, 2), absl::StatusCode::kInvalidArgument, "agent.job"},
      {Joining("j", 2, 2), absl::StatusCode::kInvalidArgument, "agent.rank"},
      {Joining("j", 0, 0), absl::StatusCode::kInvalidArgument, "world_size"},
  };
  for (const Case& k : cases) {
    absl::StatusOr<Joined> joined = c_.Join(k.info);
    EXPECT_EQ(joined.status().code(), k.code) << k.says;
    EXPECT_THAT(joined.status().message(), HasSubstr(k.says));
  }
  ASSERT_TRUE(c_.Join(Joining("j", 0, 2)).ok());
  absl::StatusOr<Joined> other = c_.Join(Joining("j", 1, 4));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.status().message(), HasSubstr("has world size 2"));
}

TEST_F(CoordinatorTest, ASecondAgentForALiveRankIsRefused) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 1, 5)).ok());
  absl::StatusOr<std::shared_ptr<Mailbox>> live = c_.Connect(Id("j", 0, 5));
  ASSERT_TRUE(live.ok());
  absl::StatusOr<Joined> second = c_.Join(Joining("j", 0, 1, 6));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(second.status().message(),
              HasSubstr("rank 0 of job \"j\" is held by a live agent "
                        "(connected)"));
  // Nothing about the holder: not its incarnation, not its session.
  EXPECT_THAT(second.status().message(), Not(HasSubstr("0000000000000005")));
  EXPECT_THAT(second.status().message(), Not(HasSubstr("session-")));
  c_.Disconnect(Id("j", 0, 5), *live);  // it died: a new one may take over
  EXPECT_TRUE(c_.Join(Joining("j", 0, 1, 6)).ok());
}

TEST_F(CoordinatorTest, AnAgentOfNoJobIsNotFoundNamingTheField) {
  for (const absl::Status& s :
       {c_.JobOf(Id("ghost", 0, 1)).status(),
        c_.Connect(Id("ghost", 0, 1)).status(), c_.Leave(Id("ghost", 0, 1))}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(s.message(), HasSubstr("agent.job: no job \"ghost\" (join "
                                       "before anything else)"));
  }
}

TEST_F(CoordinatorTest, AnOldIncarnationIsRefused) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 1, 5)).ok());
  ASSERT_TRUE(c_.Join(Joining("j", 0, 1, 6)).ok());
  absl::StatusOr<std::shared_ptr<Mailbox>> old = c_.Connect(Id("j", 0, 5));
  EXPECT_EQ(old.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(old.status().message(),
              HasSubstr("agent.incarnation: not rank 0's current incarnation "
                        "in job \"j\""));
  EXPECT_THAT(old.status().message(), Not(HasSubstr("0000000000000006")));
  EXPECT_EQ(JobFor(c_, Id("j", 0, 5)).Report(Id("j", 0, 5), 1, "r", {}).code(),
            absl::StatusCode::kFailedPrecondition);
}

// Knowing a rank's job, rank and incarnation is not enough to act for it:
// every call for the rank needs the session Join gave its agent, and a
// refusal shows neither the session nor the incarnation.
TEST_F(CoordinatorTest, EveryCallForARankNeedsItsSession) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 1, 5)).ok());
  AgentId impostor = Id("j", 0, 5);
  impostor.session = "guessed";
  Job& job = JobFor(c_, impostor);
  const std::vector<absl::Status> refused = {
      c_.Connect(impostor).status(),
      c_.Leave(impostor),
      job.StoreSet(impostor, "r", "k", "v"),
      job.StoreGet(impostor, "r", {"k"}, absl::Now()).status(),
      job.StoreDelete(impostor, "r", "").status(),
      job.Progress(impostor, "r", 1),
      job.Report(impostor, 1, "r", {}),
  };
  for (const absl::Status& s : refused) {
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
    EXPECT_THAT(s.message(), HasSubstr("agent.session: not the session rank 0 "
                                       "of job \"j\" was given when it "
                                       "joined"));
    EXPECT_THAT(s.message(), Not(HasSubstr(TestSession(Id("j", 0, 5)))));
  }
  // Joining again as the same incarnation needs the session too, so the
  // impostor cannot learn it that way either.
  JoinInfo again = Joining("j", 0, 1, 5);
  again.agent.session = "";
  EXPECT_EQ(c_.Join(again).status().code(),
            absl::StatusCode::kPermissionDenied);
  again.agent.session = TestSession(again.agent);
  absl::StatusOr<Joined> rejoined = c_.Join(again);
  ASSERT_TRUE(rejoined.ok()) << rejoined.status();
  EXPECT_EQ(rejoined->session, again.agent.session);
  // Nothing the impostor did changed the rank: its agent connects.
  absl::StatusOr<std::shared_ptr<Mailbox>> box = c_.Connect(Id("j", 0, 5));
  ASSERT_TRUE(box.ok()) << box.status();
  c_.Disconnect(Id("j", 0, 5), *box);
}

// The server's sessions: 128 random bits as 32 hex digits, never repeated
// in practice; compared whole.
TEST(SessionSecretTest, RandomSessionsAreLongHexAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string s = RandomSession();
    ASSERT_EQ(s.size(), 32u);
    EXPECT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_TRUE(SameSecret("abc", "abc"));
  EXPECT_FALSE(SameSecret("abd", "abc"));
  EXPECT_FALSE(SameSecret("ab", "abc"));
  EXPECT_FALSE(SameSecret("", "abc"));
}

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
              HasSubstr("was not ready by the deadline: ranks 0, 1, 2"));
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

// `world` agents of job `job` joined and connected (incarnations 100 +
// rank), as a test drives them by hand: their mailboxes, by rank.
std::vector<std::shared_ptr<Mailbox>> ConnectedAgents(Coordinator& c,
                                                      const std::string& job,
                                                      int64_t world) {
  std::vector<std::shared_ptr<Mailbox>> mailboxes;
  for (int64_t r = 0; r < world; ++r) {
    absl::StatusOr<std::shared_ptr<Mailbox>> m;
    if (c.Join(Joining(job, r, world)).ok()) {
      m = c.Connect(Id(job, r, 100 + r));
    }
    if (m.ok()) mailboxes.push_back(*m);
  }
  return mailboxes;
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

// The stores of all jobs share one budget: past it a store refuses to
// grow (naming the flag) while what is stored stays; bytes come back when
// keys are overwritten smaller, erased, or their job's store goes.
TEST(StoreBudgetTest, StoresOfAllJobsShareOneBudget) {
  CoordinatorLimits limits;
  auto budget = std::make_shared<StoreBudget>(20);
  RendezvousStore a(limits, budget);
  auto b = std::make_unique<RendezvousStore>(limits, budget);
  EXPECT_TRUE(a.Set("r1", "ka", std::string(8, 'x'), 0).ok());   // 10 bytes
  EXPECT_TRUE(b->Set("r2", "kb", std::string(6, 'x'), 0).ok());  // 8 bytes
  absl::Status full = a.Set("r1", "kc", "xx", 0);                // 4 more
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            "value: setting \"kc\" would take the rendezvous stores of all "
            "jobs past their maximum of 20 bytes (--max_store_bytes_total)");
  EXPECT_EQ(a.keys(), 1);
  EXPECT_EQ(budget->used(), 18);
  EXPECT_TRUE(a.Set("r1", "ka", "x", 0).ok());  // 10 -> 3 bytes
  EXPECT_EQ(budget->used(), 11);
  EXPECT_TRUE(a.Set("r1", "kc", "xx", 0).ok());
  EXPECT_EQ(budget->used(), 15);
  b.reset();  // its job dropped
  EXPECT_EQ(budget->used(), 7);
  a.EraseRun("r1");
  EXPECT_EQ(budget->used(), 0);
  EXPECT_EQ(a.bytes(), 0);
}

// A key belongs to the rank that set it first: another rank reads it but
// can neither overwrite nor delete it; its owner can do both.
TEST(RendezvousStoreTest, AKeyBelongsToTheRankThatSetItFirst) {
  CoordinatorLimits limits;
  RendezvousStore store(limits);
  ASSERT_TRUE(store.Set("r", "p/0", "rank 0's address", 0).ok());
  const absl::Status overwrite = store.Set("r", "p/0", "elsewhere", 3);
  EXPECT_EQ(overwrite.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(overwrite.message(),
            "key: \"p/0\" was set by rank 0; a rank may write only the keys "
            "it set first");
  EXPECT_EQ(store.ErasePrefix("r", "p/", 3), 0);
  EXPECT_EQ((*store.Lookup({"p/0"}))[0], "rank 0's address");
  EXPECT_TRUE(store.Set("r", "p/0", "moved", 0).ok());
  EXPECT_EQ((*store.Lookup({"p/0"}))[0], "moved");
  EXPECT_EQ(store.ErasePrefix("r", "p/", 0), 1);
  EXPECT_EQ(store.keys(), 0);
}

TEST_F(CoordinatorTest, TheStoreRefusesWorkOutsideItsRunAndPastItsBounds) {
  limits_.max_store_keys_per_job = 2;
  limits_.max_store_bytes_per_job = 64;
  Coordinator c(limits_, SystemClock(), TestSessions());
  ASSERT_TRUE(c.Join(Joining("j", 0, 1)).ok());
  const AgentId id = Id("j", 0, 100);
  absl::Status outside = JobFor(c, id).StoreSet(id, "nope", "k", "v");
  EXPECT_EQ(outside.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(outside.message(), HasSubstr("run_id: run \"nope\" is not"));
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox = c.Connect(id);
  std::thread agent([&] {
    std::optional<WorkItem> item = (*mailbox)->Pop(Soon());
    ASSERT_TRUE(item.has_value());
    const std::string run = item->run->run_id;
    EXPECT_TRUE(JobFor(c, id).StoreSet(id, run, "a", "1").ok());
    EXPECT_TRUE(JobFor(c, id).StoreSet(id, run, "b", "2").ok());
    EXPECT_EQ(JobFor(c, id).StoreSet(id, run, "c", "3").code(),
              absl::StatusCode::kResourceExhausted);
    absl::Status big =
        JobFor(c, id).StoreSet(id, run, "a", std::string(100, 'x'));
    EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(big.message(), HasSubstr("maximum of 64 bytes"));
    absl::StatusOr<std::vector<std::string>> missing = JobFor(c, id).StoreGet(
        id, run, {"a", "zz"}, absl::Now() + absl::Milliseconds(100));
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_THAT(missing.status().message(),
                HasSubstr("1 of 2 rendezvous keys still missing at the "
                          "deadline: zz"));
    EXPECT_EQ(*JobFor(c, id).StoreGet(id, run, {"b", "a"}, Soon()),
              (std::vector<std::string>{"2", "1"}));
    EXPECT_EQ(c.GetJob("j")->store_keys, 2);
    // A delete by prefix frees its keys (and their bytes) for the run.
    EXPECT_EQ(*JobFor(c, id).StoreDelete(id, run, "b"), 1);
    EXPECT_EQ(c.GetJob("j")->store_keys, 1);
    EXPECT_TRUE(JobFor(c, id).StoreSet(id, run, "c", "3").ok());
    EXPECT_EQ(JobFor(c, id).StoreDelete(id, "nope", "").status().code(),
              absl::StatusCode::kFailedPrecondition);
    executor::RankReport report;
    report.seconds_min = report.seconds_median = {0};
    report.tensors = {{0, true, "", {}}};
    EXPECT_TRUE(
        JobFor(c, id).Report(id, item->run->generation, run, report).ok());
  });
  absl::StatusOr<RunOutcome> out = c.RunJob("j", SpecFor(1), Soon(), {});
  agent.join();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(c.GetJob("j")->store_keys, 0);
  c.Shutdown("test over");
}

TEST_F(CoordinatorTest, JobsAndConcurrentRunsAreBounded) {
  limits_.max_jobs = 1;
  limits_.max_concurrent_runs = 1;
  Coordinator c(limits_, SystemClock(), TestSessions());
  EXPECT_TRUE(c.Admitting());
  ASSERT_TRUE(c.Join(Joining("one", 0, 2)).ok());
  EXPECT_FALSE(c.Admitting());  // at the job cap
  absl::StatusOr<Joined> two = c.Join(Joining("two", 0, 2));
  EXPECT_EQ(two.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(two.status().message(), HasSubstr("maximum of 1 jobs"));
  std::thread waiting([&] {  // rank 1 never comes: it waits to its deadline
    EXPECT_EQ(c.RunJob("one", SpecFor(2), absl::Now() + absl::Seconds(1), {})
                  .status()
                  .code(),
              absl::StatusCode::kDeadlineExceeded);
  });
  EXPECT_TRUE(testing_wait::AwaitJob(
      c, "one", [](const JobSnapshot& info) { return info.run_calls == 1; }));
  absl::StatusOr<RunOutcome> second = c.RunJob("one", SpecFor(2), Soon(), {});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(second.status().message(), HasSubstr("concurrent RunJob"));
  waiting.join();
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

TEST_F(CoordinatorTest, AJobIsForgottenWhenItsLastAgentLeaves) {
  ASSERT_TRUE(c_.Join(Joining("j", 0, 2)).ok());
  ASSERT_TRUE(c_.Join(Joining("j", 1, 2)).ok());
  ASSERT_TRUE(c_.Leave(Id("j", 0, 100)).ok());
  EXPECT_EQ(c_.GetJob("j")->agents.size(), 1u);
  ASSERT_TRUE(c_.Leave(Id("j", 1, 101)).ok());
  EXPECT_EQ(c_.GetJob("j").status().code(), absl::StatusCode::kNotFound);
}

// A job whose agents died without leaving (no stream, no run, no caller)
// is dropped after job_idle_seconds; a connected agent keeps it. The clock
// is moved by hand: the drop is checked to the second, without sleeping.
TEST(CoordinatorIdleTest, AJobWithNoAgentLeftIsDroppedAfterItsIdleTime) {
  CoordinatorLimits limits;
  limits.job_idle_seconds = 60;
  absl::Time now = absl::FromUnixSeconds(1'000'000);
  Coordinator c(
      limits, [&now] { return now; }, TestSessions());
  ASSERT_TRUE(c.Join(Joining("kept", 0, 2)).ok());
  ASSERT_TRUE(c.Join(Joining("dead", 0, 2)).ok());
  absl::StatusOr<std::shared_ptr<Mailbox>> kept = c.Connect(Id("kept", 0, 100));
  absl::StatusOr<std::shared_ptr<Mailbox>> dead = c.Connect(Id("dead", 0, 100));
  ASSERT_TRUE(kept.ok() && dead.ok());
  c.Disconnect(Id("dead", 0, 100), *dead);  // its stream dropped: killed
  now += absl::Seconds(59);
  EXPECT_TRUE(c.GetJob("dead").ok());  // not idle for long enough yet
  now += absl::Seconds(1);
  EXPECT_EQ(c.GetJob("dead").status().code(), absl::StatusCode::kNotFound);
  now += absl::Hours(1);  // a connected agent keeps its job however long
  EXPECT_TRUE(c.GetJob("kept").ok());
  EXPECT_EQ(c.AllJobs().size(), 1u);
  c.Shutdown("test over");
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
