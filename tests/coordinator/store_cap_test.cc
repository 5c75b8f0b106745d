// Issue 28 item 5: 64 jobs, each with the token issued for it and a run held in
// flight by a stand-in agent that never reports, fill their rendezvous
// stores with 1 MiB values until refused. The global cap
// (--max_store_bytes_total) holds: the stores together keep at most it,
// refusals name the flag, and the planner's resident set grows by about
// the cap, not by the 1 GiB offered. Cancelling the runs frees every key.
// Jobs of self-chosen tokens (--legacy_job_tokens) share one
// credential's bytes (--max_store_bytes_per_credential), so minting tokens
// cannot take an issued job's bytes.
#include <unistd.h>

#include <chrono>
#include <cstdint>
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
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/fault_fixture.h"

namespace reshard {
namespace {

constexpr int kJobs = 64;
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kPerJob = 16 * kMiB;  // 64 jobs offer 1 GiB
constexpr int64_t kTotal = 32 * kMiB;
#if defined(__SANITIZE_ADDRESS__)
// ASan keeps up to 256 MiB of freed memory in quarantine.
constexpr int64_t kRssSlack = 512 * kMiB;
#else
constexpr int64_t kRssSlack = 128 * kMiB;
#endif

constexpr char kAdminToken[] = "store-cap-admin-token";

std::string JobName(int job) { return absl::StrCat("store", job); }
std::string IssuedToken(int job) {
  return JobTokenKey::FromAdminToken(kAdminToken).Issue(JobName(job));
}

std::unique_ptr<grpc::ClientContext> WithToken(const std::string& token) {
  auto context = testing::Bounded(std::chrono::seconds(60));
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

class StoreCapTest : public testing::FaultFixture {
 protected:
  void SetUp() override {
    char path[] = "/tmp/reshard-admin-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    admin_file_ = path;
    std::ofstream(admin_file_) << kAdminToken << "\n";
    Start({});
  }
  void TearDown() override { std::remove(admin_file_.c_str()); }

  void Start(std::vector<std::string> more) {
    std::vector<std::string> flags = {
        "--admin_token_file=" + admin_file_,
        absl::StrCat("--max_store_bytes_per_job=", kPerJob),
        absl::StrCat("--max_store_bytes_total=", kTotal)};
    flags.insert(flags.end(), more.begin(), more.end());
    StartServer(flags);
  }

  // Joins job j's rank 0 with `token`, opens its stream and starts a
  // RunJob on it.
  void Hold(int j, const std::string& token, HeldRun& held) {
    held.token = token;
    held.id = testing::Agent(JobName(j), 0, 7);
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
      held.run_status = stub_->RunJob(
          WithToken(held.token).get(),
          testing::AllGatherRun(held.id.job(), 1, 8, 1, 30), &response);
    });
    v1::Work work;
    ASSERT_TRUE(held.stream->Read(&work));
    ASSERT_TRUE(work.has_run());
    held.run_id = work.run().run_id();
  }

  // Offers the job's store its full share in 1 MiB values (16 MiB), going
  // on past refusals; the bytes accepted, and the last refusal in
  // `refusal`.
  int64_t Fill(const HeldRun& held, grpc::Status& refusal) {
    int64_t accepted = 0;
    for (int k = 0; k < kPerJob / kMiB; ++k) {
      v1::StoreSetRequest set;
      *set.mutable_agent() = held.id;
      set.set_run_id(held.run_id);
      set.set_key(absl::StrCat("k", k));
      set.set_value(std::string(kMiB, 'x'));
      v1::StoreSetResponse response;
      const grpc::Status status =
          stub_->StoreSet(WithToken(held.token).get(), set, &response);
      if (status.ok()) {
        accepted += kMiB + static_cast<int64_t>(set.key().size());
      } else {
        refusal = status;
      }
    }
    return accepted;
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

TEST_F(StoreCapTest, SixtyFourFullStoresStayWithinTheGlobalCap) {
  const int64_t rss_before = testing::ResidentBytes(server_->pid());
  std::vector<HeldRun> held(kJobs);
  for (int j = 0; j < kJobs; ++j) {
    Hold(j, IssuedToken(j), held[j]);
    ASSERT_FALSE(HasFatalFailure()) << "job " << j;
  }
  int64_t stored = 0;
  int refused_by_total = 0;
  for (int j = 0; j < kJobs; ++j) {
    grpc::Status refusal;
    stored += Fill(held[j], refusal);
    EXPECT_EQ(refusal.error_code(), grpc::RESOURCE_EXHAUSTED)
        << refusal.error_message();
    refused_by_total += refusal.error_message().find(
                            "(--max_store_bytes_total)") != std::string::npos;
  }
  const int64_t rss = testing::ResidentBytes(server_->pid());
  std::printf(
      "%d jobs stored %lld bytes (cap %lld); planner RSS %lld -> "
      "%lld bytes\n",
      kJobs, static_cast<long long>(stored), static_cast<long long>(kTotal),
      static_cast<long long>(rss_before), static_cast<long long>(rss));
  EXPECT_LE(stored, kTotal);
  EXPECT_GE(stored, kTotal - 2 * kMiB);  // the cap, not less, was reached
  EXPECT_GE(refused_by_total, kJobs - kTotal / kPerJob - 1);
  EXPECT_LE(rss - rss_before, kTotal + kRssSlack);

  Release(held);
  for (int j = 0; j < kJobs; ++j) {
    v1::GetJobRequest get;
    get.set_job(held[j].id.job());
    v1::GetJobResponse info;
    ASSERT_TRUE(stub_->GetJob(WithToken(held[j].token).get(), get, &info).ok());
    EXPECT_EQ(info.job().store_bytes(), 0) << "job " << j;
  }
}

// Four jobs of self-chosen tokens fill the one share they count in; a job
// of an issued token still stores everything its own cap allows.
TEST_F(StoreCapTest, MintedTokensCannotTakeAnIssuedJobsBytes) {
  Start({"--legacy_job_tokens",
         absl::StrCat("--max_store_bytes_per_credential=", kPerJob)});
  constexpr int kMinted = 4;
  std::vector<HeldRun> held(kMinted + 1);
  for (int j = 0; j < kMinted; ++j) {
    Hold(j, absl::StrCat("minted-", j), held[j]);
    ASSERT_FALSE(HasFatalFailure()) << "job " << j;
  }
  Hold(kMinted, IssuedToken(kMinted), held[kMinted]);
  ASSERT_FALSE(HasFatalFailure());
  int64_t minted = 0;
  for (int j = 0; j < kMinted; ++j) {
    grpc::Status refusal;
    minted += Fill(held[j], refusal);
    EXPECT_EQ(refusal.error_code(), grpc::RESOURCE_EXHAUSTED);
    if (j > 0) {
      EXPECT_NE(refusal.error_message().find(
                    "the rendezvous stores of the share of self-chosen job "
                    "tokens (--legacy_job_tokens) past their maximum of "),
                std::string::npos)
          << refusal.error_message();
    }
  }
  EXPECT_LE(minted, kPerJob);
  grpc::Status refusal;
  const int64_t issued = Fill(held[kMinted], refusal);
  // All but the last value: the job's own cap, nothing shared, refuses it.
  EXPECT_GE(issued, kPerJob - 2 * kMiB);
  EXPECT_NE(refusal.error_message().find("the job's rendezvous store"),
            std::string::npos)
      << refusal.error_message();
  Release(held);
}

}  // namespace
}  // namespace reshard
