// Tests of the Coordinator's core (coordinator/): membership, generations
// and incarnations, sessions, and when a job is forgotten. Runs are in
// coordinator_run_test.cc, the store in coordinator_store_test.cc (one
// binary); the real agents over gRPC are in job_run_test.
#include "coordinator/coordinator.h"

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/same_secret.h"
#include "common/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_cases.h"
#include "tests/coordinator/stand_in_agents.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
    EXPECT_THAT(s.message(), HasSubstr("agent.job: no job \"ghost\" for "
                                       "this caller (join before anything "
                                       "else;"));
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

}  // namespace
}  // namespace reshard::coordinator
