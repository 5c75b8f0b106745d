// Runs held in flight on a real reshard-planner that issues job tokens:
// each job's stand-in agent (rank 0 of a one-rank job) joins with its
// token, opens its dispatch stream and is sent a run that it never reports,
// while a RunJob call waits for it. The store tests fill or wait on the
// stores of such runs; Release cancels them.
#ifndef RESHARD_TESTS_COORDINATOR_HELD_RUNS_H_
#define RESHARD_TESTS_COORDINATOR_HELD_RUNS_H_

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/issued_job_token.h"
#include "common/version.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/fault_fixture.h"

namespace reshard::testing {

inline constexpr char kHeldRunsAdminToken[] = "held-runs-admin-token";

inline std::string HeldJobName(int job) { return absl::StrCat("held", job); }
inline std::string IssuedToken(int job) {
  return JobTokenKey::FromAdminToken(kHeldRunsAdminToken)
      .Issue(HeldJobName(job));
}

inline std::unique_ptr<grpc::ClientContext> WithToken(
    const std::string& token) {
  auto context = Bounded(std::chrono::seconds(60));
  context->AddMetadata(kJobTokenHeader, token);
  return context;
}

// One job's stand-in: joined, its dispatch stream open, the run it was
// sent, and the RunJob call waiting for a report that never comes.
struct HeldRun {
  v1::AgentId id;
  std::string token;
  std::unique_ptr<grpc::ClientContext> stream_context;
  std::unique_ptr<grpc::ClientReader<v1::Work>> stream;
  std::string run_id;
  std::thread caller;
  grpc::Status run_status;
};

class HeldRunsFixture : public FaultFixture {
 protected:
  void SetUp() override {
    char path[] = "/tmp/reshard-admin-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    admin_file_ = path;
    std::ofstream(admin_file_) << kHeldRunsAdminToken << "\n";
  }
  void TearDown() override { std::remove(admin_file_.c_str()); }

  // Starts the planner with the admin token file and `flags`.
  void StartIssuing(std::vector<std::string> flags) {
    flags.push_back("--admin_token_file=" + admin_file_);
    StartServer(flags);
  }

  // Joins job j's rank 0 with `token`, opens its stream and starts a
  // RunJob on it.
  void Hold(int j, const std::string& token, HeldRun& held) {
    held.token = token;
    held.id = Agent(HeldJobName(j), 0, 7);
    v1::JoinRequest join;
    *join.mutable_agent() = held.id;
    join.set_world_size(1);
    join.set_version(kReshardVersion);
    join.set_protocol(kCoordinatorProtocol);
    v1::JoinResponse joined;
    const grpc::Status s = stub_->Join(WithToken(token).get(), join, &joined);
    ASSERT_TRUE(s.ok()) << s.error_message();
    held.id.set_session(joined.session());
    v1::DispatchRequest dispatch;
    *dispatch.mutable_agent() = held.id;
    held.stream_context = WithToken(token);
    held.stream = stub_->Dispatch(held.stream_context.get(), dispatch);
    held.caller = std::thread([this, &held] {
      v1::RunJobResponse response;
      held.run_status =
          stub_->RunJob(WithToken(held.token).get(),
                        AllGatherRun(held.id.job(), 1, 8, 1, 30), &response);
    });
    v1::Work work;
    ASSERT_TRUE(held.stream->Read(&work));
    ASSERT_TRUE(work.has_run());
    held.run_id = work.run().run_id();
  }

  // Cancels every held run and waits for its RunJob to end CANCELLED.
  void Release(std::vector<HeldRun>& held) {
    for (HeldRun& h : held) {
      v1::CancelJobRequest cancel;
      cancel.set_job(h.id.job());
      v1::CancelJobResponse response;
      EXPECT_TRUE(
          stub_->CancelJob(WithToken(h.token).get(), cancel, &response).ok());
    }
    for (HeldRun& h : held) {
      h.caller.join();
      EXPECT_EQ(h.run_status.error_code(), grpc::CANCELLED);
      h.stream_context->TryCancel();
      h.stream->Finish();
    }
  }

  std::string admin_file_;
};

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_COORDINATOR_HELD_RUNS_H_
