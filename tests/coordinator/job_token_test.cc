// Job tokens in the Coordinator's core (coordinator/job_token.h): a job
// created with a token admits only callers that present it, a job created
// without one is open, a server that does not allow open jobs refuses
// token-less callers before looking anything up, and an admin sees every
// job but acts on none. Refusals carry the code and name the job, never a
// token. The same over gRPC with real agents: job_token_e2e_test.cc.
#include "coordinator/job_token.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_cases.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "job-token-1234";

Caller Holder() { return Caller{kToken, false}; }
Caller Outsider() { return Caller{"another-token", false}; }
Caller Anonymous() { return Caller{}; }
Caller Admin() { return Caller{"", true}; }

absl::Time Soon() { return absl::Now() + absl::Milliseconds(50); }

// Waits (bounded) until a RunJob call is in job `job`.
bool AwaitRunCalls(const Coordinator& c, const std::string& job,
                   const Caller& caller) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    absl::StatusOr<JobSnapshot> info = c.GetJob(job, caller);
    if (info.ok() && info->run_calls == 1) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return false;
}

void ExpectRefused(const absl::Status& s, absl::StatusCode code,
                   const std::string& says) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_THAT(s.message(), HasSubstr(says));
  EXPECT_THAT(s.message(), Not(HasSubstr(kToken)));
}

class JobTokenTest : public ::testing::Test {
 protected:
  // Rank 0 of 2 of job "secret" joins with the token.
  void SetUp() override {
    ASSERT_TRUE(c_.Join(Joining("secret", 0, 2), Holder()).ok());
  }
  void TearDown() override { c_.Shutdown("test over"); }

  CoordinatorLimits limits_;
  Coordinator c_{limits_, SystemClock(), TestSessions()};
};

// Every call but Join answers an outsider exactly as it answers a caller
// of a job that does not exist: the same code and the same bytes, so no
// made-up token tells which jobs exist.
TEST_F(JobTokenTest, ATokenedJobAnswersOutsidersAsAMissingJob) {
  Coordinator empty{limits_, SystemClock(), TestSessions()};
  const AgentId rank0 = Id("secret", 0, 100);
  auto calls = [&](Coordinator& c, const Caller& caller) {
    return std::vector<absl::Status>{
        c.Connect(rank0, caller).status(),
        c.JobOf(rank0, caller).status(),
        c.Leave(rank0, caller),
        c.RunJob("secret", SpecFor(2), Soon(), {}, caller).status(),
        c.GetJob("secret", caller).status(),
        c.CancelJob("secret", false, caller).status(),
    };
  };
  for (const Caller& caller : {Anonymous(), Outsider()}) {
    const std::vector<absl::Status> held = calls(c_, caller);
    const std::vector<absl::Status> missing = calls(empty, caller);
    ASSERT_EQ(held.size(), missing.size());
    for (size_t i = 0; i < held.size(); ++i) {
      EXPECT_EQ(held[i], missing[i]) << "call " << i;
      ExpectRefused(held[i], absl::StatusCode::kNotFound,
                    "no job \"secret\" for this caller");
    }
    EXPECT_TRUE(c_.ListJobs(caller).empty());
  }
  // Join names what is wrong: it would create a missing job.
  ExpectRefused(c_.Join(Joining("secret", 1, 2), Anonymous()).status(),
                absl::StatusCode::kUnauthenticated,
                "job \"secret\" needs its job token (gRPC metadata "
                "x-reshard-job-token");
  ExpectRefused(c_.Join(Joining("secret", 1, 2), Outsider()).status(),
                absl::StatusCode::kPermissionDenied,
                "job \"secret\": the job token presented is not the job's");
  // The server's own readings (the metrics' job and agent counts) see it.
  EXPECT_EQ(c_.AllJobs().size(), 1u);
  // Nothing the outsiders did touched the job: rank 0 is still its only
  // member, and the holder sees it.
  absl::StatusOr<JobSnapshot> info = c_.GetJob("secret", Holder());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->generation, 1);
  ASSERT_EQ(c_.ListJobs(Holder()).size(), 1u);
  EXPECT_TRUE(c_.Connect(rank0, Holder()).ok());
  empty.Shutdown("test over");
}

// A refused joiner learns nothing of the job: not its world size or
// backend, which a joiner of the right token is told.
TEST_F(JobTokenTest, TheTokenIsCheckedBeforeTheJobsShape) {
  const absl::Status wrong_shape =
      c_.Join(Joining("secret", 1, 4), Outsider()).status();
  ExpectRefused(wrong_shape, absl::StatusCode::kPermissionDenied,
                "the job token presented is not the job's");
  EXPECT_THAT(wrong_shape.message(), Not(HasSubstr("world size")));
  const absl::Status holder =
      c_.Join(Joining("secret", 1, 4), Holder()).status();
  EXPECT_EQ(holder.code(), absl::StatusCode::kFailedPrecondition) << holder;
  EXPECT_THAT(holder.message(), HasSubstr("world size 2"));
}

TEST_F(JobTokenTest, HoldersJoinAndAdminsOnlyLook) {
  ASSERT_TRUE(c_.Join(Joining("secret", 1, 2), Holder()).ok());
  absl::StatusOr<JobSnapshot> seen = c_.GetJob("secret", Admin());
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->agents.size(), 2u);
  EXPECT_EQ(c_.ListJobs(Admin()).size(), 1u);
  const std::string says =
      "job: job \"secret\": the admin token shows jobs; running, cancelling "
      "and agent calls take the job's token";
  ExpectRefused(c_.CancelJob("secret", false, Admin()).status(),
                absl::StatusCode::kPermissionDenied, says);
  ExpectRefused(c_.RunJob("secret", SpecFor(2), Soon(), {}, Admin()).status(),
                absl::StatusCode::kPermissionDenied, says);
  absl::StatusOr<std::string> cancelled =
      c_.CancelJob("secret", false, Holder());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(*cancelled, "");  // nothing was running
}

// An open job is everyone's, but an agent holding a token does not join
// it (it would run someone else's work), and a tokened agent cannot be
// joined by one without the token.
TEST_F(JobTokenTest, OpenJobsAreOpenAndTokensDoNotMix) {
  ASSERT_TRUE(c_.Join(Joining("open", 0, 2), Anonymous()).ok());
  ExpectRefused(c_.Join(Joining("open", 1, 2), Holder()).status(),
                absl::StatusCode::kPermissionDenied,
                "job \"open\" was created without a job token and this agent "
                "presents one");
  EXPECT_TRUE(c_.GetJob("open", Outsider()).ok());
  EXPECT_TRUE(c_.CheckActor("open", Anonymous()).ok());
  EXPECT_EQ(c_.ListJobs(Anonymous()).size(), 1u);  // "open", not "secret"
  EXPECT_EQ(c_.ListJobs(Holder()).size(), 2u);
  // An unknown job is NOT_FOUND to everyone; RunJob's early check lets it
  // through to say so.
  EXPECT_EQ(c_.GetJob("nobody", Holder()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(c_.CheckActor("nobody", Outsider()).ok());
}

TEST(JobTokenPolicyTest, AServerWithoutOpenJobsRefusesTokenlessCallers) {
  CoordinatorLimits limits;
  limits.allow_open_jobs = false;
  Coordinator c(limits, SystemClock(), TestSessions());
  const std::string says =
      "this server serves only jobs with a job token "
      "(--allow_open_jobs=false)";
  // Nobody creates a job without a token there, the admin included.
  for (const Caller& caller : {Anonymous(), Admin()}) {
    ExpectRefused(c.Join(Joining("open", 0, 1), caller).status(),
                  absl::StatusCode::kUnauthenticated, says);
  }
  EXPECT_EQ(c.GetJob("open", Admin()).status().code(),
            absl::StatusCode::kNotFound);  // it was never created
  ASSERT_TRUE(c.Join(Joining("tokened", 0, 1), Holder()).ok());
  // Before any lookup: the same answer for a job that exists and one that
  // does not.
  for (const std::string job : {"tokened", "nobody"}) {
    ExpectRefused(c.GetJob(job, Anonymous()).status(),
                  absl::StatusCode::kUnauthenticated, says);
    ExpectRefused(c.CheckActor(job, Anonymous()),
                  absl::StatusCode::kUnauthenticated, says);
  }
  EXPECT_TRUE(c.ListJobs(Anonymous()).empty());
  EXPECT_EQ(c.ListJobs(Admin()).size(), 1u);
  c.Shutdown("test over");
}

// One job token fills only its own share of jobs and RunJob slots:
// another token, and callers with none, are still served.
TEST(CredentialQuotaTest, OneTokensJobsAndRunsAreCappedOthersServed) {
  CoordinatorLimits limits;
  limits.max_jobs_per_credential = 2;
  limits.max_runs_per_credential = 1;
  Coordinator c(limits, SystemClock(), TestSessions());
  const Caller a{"token-a", false};
  ASSERT_TRUE(c.Join(Joining("a0", 0, 2), a).ok());
  ASSERT_TRUE(c.Join(Joining("a1", 0, 2), a).ok());
  const absl::Status third = c.Join(Joining("a2", 0, 2), a).status();
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(third.message(),
            "agent.job: this job token already has its maximum of 2 jobs "
            "(--max_jobs_per_credential)");
  const Caller b{"token-b", false};
  ASSERT_TRUE(c.Join(Joining("b0", 0, 2), b).ok());
  ASSERT_TRUE(c.Join(Joining("open", 0, 2), Anonymous()).ok());

  // Rank 1 never joins: a0's RunJob holds token A's one slot until its
  // deadline.
  std::thread waiting([&] {
    EXPECT_EQ(c.RunJob("a0", SpecFor(2), absl::Now() + absl::Seconds(2), {}, a)
                  .status()
                  .code(),
              absl::StatusCode::kDeadlineExceeded);
  });
  ASSERT_TRUE(AwaitRunCalls(c, "a0", a));
  const absl::Status second =
      c.RunJob("a1", SpecFor(2), Soon(), {}, a).status();
  EXPECT_EQ(second.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(second.message(),
            "this job token already has its maximum of 1 concurrent RunJob "
            "calls (--max_runs_per_credential)");
  // Token B's call is not refused: it waits for b0 until its deadline.
  EXPECT_EQ(c.RunJob("b0", SpecFor(2), Soon(), {}, b).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  waiting.join();
  c.Shutdown("test over");
}

}  // namespace
}  // namespace reshard::coordinator
