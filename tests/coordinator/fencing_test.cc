// The Coordinator's fencing, driven through the gRPC service with stand-in
// agents (fault_fixture.h): a live rank's duplicate, every message of an old
// incarnation, a client that knows a rank's incarnation but not its
// session, a report of an old generation and messages for a run that
// is not the job's are refused, and touch nothing. A stand-in that refuses
// the run's plan, as an agent whose digest differs does, fails the run on
// every real rank at once, without a hang.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/fault_fixture.h"

namespace reshard {
namespace {

using std::chrono::seconds;
using std::chrono::steady_clock;
using testing::Agent;
using testing::AgentProcesses;
using testing::BackgroundRun;
using testing::kCollectiveTimeout;
using testing::LongRun;
using testing::SecondsSince;

class FencingTest : public testing::FencingFixture {
 protected:
  // A second agent for rank 0 of "fence" while the first is alive.
  void ExpectLiveDuplicateRefused() {
    const grpc::Status duplicate = Join(Agent("fence", 0, 101));
    EXPECT_EQ(duplicate.error_code(), grpc::ALREADY_EXISTS);
    EXPECT_NE(duplicate.error_message().find(
                  "rank 0 of job \"fence\" is held by a live agent"),
              std::string::npos)
        << duplicate.error_message();
  }

  // Every message of rank 1's old incarnation (200; 201 replaced it).
  void ExpectOldIncarnationRefused(const v1::AgentId& old1) {
    const std::vector<std::pair<const char*, std::function<grpc::Status()>>>
        from_old = {{"Dispatch", [&] { return RefusedDispatch(old1); }},
                    {"StoreSet", [&] { return StoreSet(old1, "r"); }},
                    {"StoreGet", [&] { return StoreGet(old1, "r"); }},
                    {"Report", [&] { return Report(old1, 1, "r"); }},
                    {"Leave", [&] { return Leave(old1); }}};
    for (const auto& [rpc, call] : from_old) {
      const grpc::Status status = call();
      EXPECT_EQ(status.error_code(), grpc::FAILED_PRECONDITION) << rpc;
      EXPECT_NE(status.error_message().find(
                    "agent.incarnation: not rank 1's current incarnation in "
                    "job \"fence\""),
                std::string::npos)
          << rpc << ": " << status.error_message();
      // Neither incarnation is shown (201 is c9 in hex).
      EXPECT_EQ(status.error_message().find("c9"), std::string::npos)
          << rpc << ": " << status.error_message();
    }
  }

  // A client that knows rank 0's job, rank and incarnation (100) but not
  // its session: every call for the rank is refused, Join included.
  void ExpectImpostorRefused() {
    v1::AgentId impostor = Agent("fence", 0, 100);
    const std::vector<std::pair<const char*, std::function<grpc::Status()>>>
        calls = {{"Join", [&] { return Join(impostor); }},
                 {"Dispatch", [&] { return RefusedDispatch(impostor); }},
                 {"StoreSet", [&] { return StoreSet(impostor, "r"); }},
                 {"StoreGet", [&] { return StoreGet(impostor, "r"); }},
                 {"Report", [&] { return Report(impostor, 1, "r"); }},
                 {"Leave", [&] { return Leave(impostor); }}};
    for (const auto& [rpc, call] : calls) {
      const grpc::Status status = call();
      EXPECT_EQ(status.error_code(), grpc::PERMISSION_DENIED) << rpc;
      EXPECT_NE(status.error_message().find(
                    "agent.session: not the session rank 0 of job \"fence\""),
                std::string::npos)
          << rpc << ": " << status.error_message();
    }
  }

  // During run `run_id`: a report tagged with an old generation, or for a
  // run that is not the job's.
  void ExpectStaleRunMessagesRefused(const v1::AgentId& a0,
                                     const std::string& run_id,
                                     int64_t generation) {
    const grpc::Status stale = Report(a0, generation - 1, run_id);
    EXPECT_EQ(stale.error_code(), grpc::FAILED_PRECONDITION);
    EXPECT_NE(stale.error_message().find(
                  absl::StrCat("generation: ", generation - 1, " is not run ",
                               run_id, "'s generation (", generation, ")")),
              std::string::npos)
        << stale.error_message();
    for (const grpc::Status& status :
         {Report(a0, generation, "old-run"), StoreSet(a0, "old-run")}) {
      EXPECT_EQ(status.error_code(), grpc::FAILED_PRECONDITION);
      EXPECT_NE(status.error_message().find(
                    "run_id: run \"old-run\" is not running in job \"fence\""),
                std::string::npos)
          << status.error_message();
    }
  }

  // Until every real rank (0-2) of "digest" has logged run `run_id` as
  // FAILED: each ended the run, none hangs in it.
  bool AwaitRealRanksFailed(const AgentProcesses& agents,
                            const std::string& run_id) {
    const std::string run = absl::StrCat("run ", run_id);
    return AwaitJob("digest", [&](const v1::JobInfo&) {
      for (int r = 0; r < 3; ++r) {
        const std::string log = agents.Log(r);
        const size_t at = log.find(run);
        if (at == std::string::npos ||
            log.find("FAILED", at) == std::string::npos) {
          return false;
        }
      }
      return true;
    });
  }
};

TEST_F(FencingTest, OldIncarnationsOldGenerationsAndLiveDuplicatesAreRefused) {
  v1::AgentId a0 = Agent("fence", 0, 100);
  v1::AgentId old1 = Agent("fence", 1, 200);
  v1::AgentId a1 = Agent("fence", 1, 201);
  ASSERT_TRUE(Join(a0).ok());
  ASSERT_TRUE(Join(old1).ok());
  ASSERT_TRUE(Join(a1).ok());  // 200 never connected: 201 replaces it
  const std::unique_ptr<testing::DispatchStream> s0 = Dispatch(a0);
  const std::unique_ptr<testing::DispatchStream> s1 = Dispatch(a1);
  ASSERT_TRUE(AwaitConnected("fence", 2));
  ExpectLiveDuplicateRefused();
  ExpectOldIncarnationRefused(old1);
  ExpectImpostorRefused();
  BackgroundRun caller(*stub_, LongRun("fence", 2, 1), seconds(30));
  v1::Work work;
  EXPECT_TRUE(s0->reader->Read(&work));
  const std::string run_id = work.run().run_id();
  ExpectStaleRunMessagesRefused(a0, run_id, work.run().generation());
  std::string cancelled;
  EXPECT_TRUE(CancelJob("fence", &cancelled).ok());
  const grpc::Status run_status = caller.Wait();
  EXPECT_EQ(cancelled, run_id);
  EXPECT_EQ(run_status.error_code(), grpc::CANCELLED);
  // Nothing the refusals touched: both ranks still hold the job.
  EXPECT_EQ(Connected(*GetJob("fence")), 2);
}

// One rank refuses the run's plan as an agent whose digest differs does
// (a stand-in here: real agents agree on the digest by construction). The
// three real agents, waiting for it to meet them, fail the run too, at
// once and without a hang; the run names the refusing rank.
TEST_F(FencingTest, ADigestMismatchOnOneRankFailsTheRunOnEveryRank) {
  AgentProcesses agents(server_->address(), "digest", 4);
  for (int r = 0; r < 3; ++r) agents.Start(r);
  v1::AgentId a3 = Agent("digest", 3, 77);
  ASSERT_TRUE(Join(a3, 4).ok());
  std::unique_ptr<testing::DispatchStream> s3 = Dispatch(a3);
  ASSERT_TRUE(AwaitConnected("digest", 4)) << agents.Logs();
  BackgroundRun caller(*stub_, LongRun("digest", 4, 1), seconds(60));
  v1::Work work;
  EXPECT_TRUE(s3->reader->Read(&work));
  const steady_clock::time_point refused = steady_clock::now();
  EXPECT_TRUE(Report(a3, work.run().generation(), work.run().run_id(),
                     grpc::FAILED_PRECONDITION,
                     "plan digest mismatch: the Coordinator sent 1, this "
                     "agent computes 2; no communicator was opened")
                  .ok());
  const grpc::Status status = caller.Wait();
  EXPECT_LT(SecondsSince(refused), 2 * kCollectiveTimeout);
  EXPECT_EQ(status.error_code(), grpc::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("rank 3: plan digest mismatch"),
            std::string::npos)
      << status.error_message();
  // Every real rank ended the run (failed, not hung) and is free: once a
  // real rank 3 replaces the stand-in, the next run validates.
  EXPECT_TRUE(AwaitRealRanksFailed(agents, work.run().run_id()))
      << agents.Logs();
  EXPECT_TRUE(Leave(a3).ok());
  s3.reset();  // the stand-in's stream closes
  agents.Start(3);
  ASSERT_TRUE(AwaitConnected("digest", 4)) << agents.Logs();
  ExpectValidatedRun("digest", 4);
  EXPECT_EQ(agents.Running(), 4);
  if (HasFailure()) ADD_FAILURE() << agents.Logs();
}

}  // namespace
}  // namespace reshard
