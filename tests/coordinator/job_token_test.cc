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
#include "common/issued_job_token.h"
#include "coordinator/coordinator.h"
#include "coordinator/token_rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_cases.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The planner's issuing key and its tokens (common/issued_job_token.h).
const JobTokenKey& Key() {
  static const JobTokenKey key = JobTokenKey::FromAdminToken("admin-secret");
  return key;
}
Caller IssuedFor(const std::string& job) { return Caller{Key().Issue(job)}; }
// The rules of a planner with an admin token: issued tokens only.
const TokenRules& Issuing() {
  static const TokenRules rules(Key(), /*legacy=*/false);
  return rules;
}
CoordinatorLimits IssuingLimits() {
  CoordinatorLimits limits;
  limits.token_rules = &Issuing();
  return limits;
}

// The holder of job "secret"; an outsider holds a token issued for another
// job; a minted token is one nobody issued.
Caller Holder() { return IssuedFor("secret"); }
Caller Outsider() { return IssuedFor("elsewhere"); }
Caller Minted() { return Caller{"job-token-1234", false}; }
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
  for (const Caller& caller : {Holder(), Outsider(), Minted()}) {
    EXPECT_THAT(s.message(), Not(HasSubstr(caller.job_token)));
  }
}

class JobTokenTest : public ::testing::Test {
 protected:
  // Rank 0 of 2 of job "secret" joins with the token.
  void SetUp() override {
    ASSERT_TRUE(c_.Join(Joining("secret", 0, 2), Holder()).ok());
  }
  void TearDown() override { c_.Shutdown("test over"); }

  CoordinatorLimits limits_ = IssuingLimits();
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
  for (const Caller& caller : {Anonymous(), Outsider(), Minted()}) {
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
                "agent.job: the job token was issued for job \"elsewhere\", "
                "not \"secret\"");
  ExpectRefused(c_.Join(Joining("secret", 1, 2), Minted()).status(),
                absl::StatusCode::kPermissionDenied,
                "agent.job: the job token was not issued by this planner "
                "(the admin issues job tokens with: reshardctl job token "
                "NAME --admin_token_file FILE)");
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
                "the job token was issued for job \"elsewhere\"");
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

// An open job is every token-less caller's, and only theirs: a token
// holder is never served by it, and a token-less agent cannot join a job
// with a token.
TEST_F(JobTokenTest, OpenJobsAreOpenAndTokensDoNotMix) {
  ASSERT_TRUE(c_.Join(Joining("open", 0, 2), Anonymous()).ok());
  EXPECT_TRUE(c_.GetJob("open", Anonymous()).ok());
  EXPECT_TRUE(c_.CheckActor("open", Anonymous()).ok());
  EXPECT_EQ(c_.GetJob("open", Outsider()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(c_.CancelJob("open", false, Outsider()).status().code(),
            absl::StatusCode::kNotFound);
  ExpectRefused(c_.Join(Joining("secret", 1, 2), Anonymous()).status(),
                absl::StatusCode::kUnauthenticated,
                "job \"secret\" needs its job token");
  EXPECT_EQ(c_.ListJobs(Anonymous()).size(), 1u);  // "open", not "secret"
  ASSERT_EQ(c_.ListJobs(Holder()).size(), 1u);     // "secret", not "open"
  EXPECT_EQ(c_.ListJobs(Holder())[0].name, "secret");
  EXPECT_FALSE(c_.ListJobs(Holder())[0].open);
  // An unknown job is NOT_FOUND to everyone; RunJob's early check lets it
  // through to say so.
  EXPECT_EQ(c_.GetJob("nobody", Holder()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(c_.CheckActor("nobody", Outsider()).ok());
}

TEST(JobTokenPolicyTest, AServerWithoutOpenJobsRefusesTokenlessCallers) {
  CoordinatorLimits limits = IssuingLimits();
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
  ASSERT_TRUE(c.Join(Joining("tokened", 0, 1), IssuedFor("tokened")).ok());
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

// Nobody takes a name whose token they were not given: not with a minted
// token, nor with one issued for another job, and not after a restart
// either (a new Coordinator with the same admin token), when the race to
// join first would reopen if first-come held names.
TEST(JobTokenPolicyTest, ASquatterCannotTakeANameBeforeOrAfterARestart) {
  for (int life = 0; life < 2; ++life) {
    Coordinator c(IssuingLimits(), SystemClock(), TestSessions());
    for (const Caller& squatter : {Minted(), Outsider()}) {
      EXPECT_EQ(c.Join(Joining("victim", 0, 2), squatter).status().code(),
                absl::StatusCode::kPermissionDenied);
    }
    EXPECT_TRUE(c.AllJobs().empty()) << "life " << life;
    ASSERT_TRUE(c.Join(Joining("victim", 0, 2), IssuedFor("victim")).ok());
    ASSERT_TRUE(c.Join(Joining("victim", 1, 2), IssuedFor("victim")).ok());
    c.Shutdown("restart");
  }
}

// A token-less squatter that joins a name first holds nothing against the
// name's token (docs/DESIGN.md §5, two name spaces): the token's agents
// form their own job beside the squatter's open one, and every call with
// the token reaches that job only, whatever the squatter's ranks do.
TEST(JobTokenPolicyTest, ATokenlessSquatterHoldsNoNameAgainstItsToken) {
  Coordinator c(IssuingLimits(), SystemClock(), TestSessions());
  ASSERT_TRUE(c.Join(Joining("victim", 0, 2), Anonymous()).ok());
  ASSERT_TRUE(c.Join(Joining("victim", 1, 2), Anonymous()).ok());
  const Caller owner = IssuedFor("victim");
  absl::StatusOr<Joined> joined = c.Join(Joining("victim", 0, 4), owner);
  ASSERT_TRUE(joined.ok()) << joined.status();
  // The owner's views and acts see its own job (world 4), never the
  // squatter's (world 2).
  absl::StatusOr<JobSnapshot> seen = c.GetJob("victim", owner);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->world_size, 4);
  EXPECT_FALSE(seen->open);
  ASSERT_EQ(c.ListJobs(owner).size(), 1u);
  EXPECT_EQ(c.ListJobs(owner)[0].world_size, 4);
  // A run for the owner waits for the owner's ranks (world 4): the
  // squatter's two ready ranks are not its job.
  absl::Status run = c.RunJob("victim", SpecFor(2), Soon(), {}, owner).status();
  EXPECT_EQ(run.code(), absl::StatusCode::kInvalidArgument) << run;
  EXPECT_THAT(run.message(), HasSubstr("job \"victim\"'s world size 4"));
  // Now the name is the token's: no more token-less ranks join it.
  ExpectRefused(c.Join(Joining("victim", 0, 2), Anonymous()).status(),
                absl::StatusCode::kUnauthenticated,
                "job \"victim\" needs its job token");
  // The squatter still sees its own open job, and nothing of the owner's.
  absl::StatusOr<JobSnapshot> squat = c.GetJob("victim", Anonymous());
  ASSERT_TRUE(squat.ok()) << squat.status();
  EXPECT_EQ(squat->world_size, 2);
  EXPECT_TRUE(squat->open);
  // An admin sees both, the open one first.
  std::vector<JobSnapshot> all = c.AllJobs();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].open);
  EXPECT_FALSE(all[1].open);
  c.Shutdown("test over");
}

// Without an admin token a planner issues nothing, so a token verifies
// nowhere: every Join with one is refused, saying how to serve tokens.
TEST(JobTokenPolicyTest, APlannerWithoutAnIssuingKeyAcceptsNoToken) {
  Coordinator c(CoordinatorLimits{}, SystemClock(), TestSessions());
  ExpectRefused(c.Join(Joining("j", 0, 1), IssuedFor("j")).status(),
                absl::StatusCode::kPermissionDenied,
                "agent.job: this planner issues no job tokens (it has no "
                "--admin_token_file) and accepts no self-chosen ones "
                "(--legacy_job_tokens)");
  EXPECT_TRUE(c.Join(Joining("open", 0, 1), Anonymous()).ok());
  c.Shutdown("test over");
}

// Under --legacy_job_tokens a self-chosen token works as before and is
// counted, but a token of the issued form must still verify.
TEST(JobTokenPolicyTest, LegacyTokensAreAcceptedAndCounted) {
  const TokenRules legacy(Key(), /*legacy=*/true);
  CoordinatorLimits limits;
  limits.token_rules = &legacy;
  Coordinator c(limits, SystemClock(), TestSessions());
  ASSERT_TRUE(c.Join(Joining("old", 0, 2), Minted()).ok());
  ASSERT_TRUE(c.Join(Joining("old", 1, 2), Minted()).ok());
  EXPECT_EQ(legacy.legacy_tokens_accepted(), 2);
  ASSERT_TRUE(c.Join(Joining("new", 0, 1), IssuedFor("new")).ok());
  EXPECT_EQ(legacy.legacy_tokens_accepted(), 2);
  std::string forged = IssuedFor("new2").job_token;
  forged[20] = forged[20] == 'a' ? 'b' : 'a';  // a digit of the MAC
  ExpectRefused(c.Join(Joining("new2", 0, 1), Caller{forged}).status(),
                absl::StatusCode::kPermissionDenied,
                "the job token does not verify");
  c.Shutdown("test over");
}

// Self-chosen tokens all count in one share, so minting tokens buys no
// quota: once the legacy share holds its jobs, runs and store bytes, the
// next minted token is refused while an issued credential and callers
// without a token are still served.
TEST(CredentialQuotaTest, MintedTokensShareOneQuotaIssuedOnesAreServed) {
  const TokenRules legacy(Key(), /*legacy=*/true);
  CoordinatorLimits limits;
  limits.token_rules = &legacy;
  limits.max_jobs = 6;
  limits.max_jobs_per_credential = 2;
  limits.max_runs_per_credential = 1;
  Coordinator c(limits, SystemClock(), TestSessions());
  const Caller a{"token-a", false};
  const Caller b{"token-b", false};
  ASSERT_TRUE(c.Join(Joining("a0", 0, 2), a).ok());
  ASSERT_TRUE(c.Join(Joining("b0", 0, 2), b).ok());
  const absl::Status third =
      c.Join(Joining("c0", 0, 2), Caller{"token-c"}).status();
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(third.message(),
            "agent.job: the share of self-chosen job tokens "
            "(--legacy_job_tokens) already holds its maximum of 2 jobs "
            "(--max_jobs_per_credential)");
  const Caller issued = IssuedFor("i0");
  ASSERT_TRUE(c.Join(Joining("i0", 0, 2), issued).ok());
  ASSERT_TRUE(c.Join(Joining("open", 0, 2), Anonymous()).ok());

  // Rank 1 never joins: a0's RunJob holds the legacy share's one slot
  // until its deadline.
  std::thread waiting([&] {
    EXPECT_EQ(c.RunJob("a0", SpecFor(2), absl::Now() + absl::Seconds(2), {}, a)
                  .status()
                  .code(),
              absl::StatusCode::kDeadlineExceeded);
  });
  ASSERT_TRUE(AwaitRunCalls(c, "a0", a));
  const absl::Status second =
      c.RunJob("b0", SpecFor(2), Soon(), {}, b).status();
  EXPECT_EQ(second.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(second.message(),
            "the share of self-chosen job tokens (--legacy_job_tokens) "
            "already holds its maximum of 1 concurrent RunJob calls "
            "(--max_runs_per_credential)");
  // The issued credential's call is not refused: it waits for i0 until
  // its deadline.
  EXPECT_EQ(c.RunJob("i0", SpecFor(2), Soon(), {}, issued).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  waiting.join();
  c.Shutdown("test over");
}

}  // namespace
}  // namespace reshard::coordinator
