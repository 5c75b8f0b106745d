// 64 jobs, each with the token issued for it and a run held in
// flight by a stand-in agent that never reports, fill their rendezvous
// stores with 1 MiB values until refused. The global cap
// (--max_store_bytes_total) holds: the stores together keep at most it,
// refusals name the flag, and the planner's resident set grows by about
// the cap, not by the 1 GiB offered. Cancelling the runs frees every key.
// Jobs of self-chosen tokens (--legacy_job_tokens) share one
// credential's bytes (--max_store_bytes_per_credential), so minting tokens
// cannot take an issued job's bytes.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/held_runs.h"

namespace reshard {
namespace {

using testing::HeldRun;
using testing::IssuedToken;
using testing::WithToken;

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

class StoreCapTest : public testing::HeldRunsFixture {
 protected:
  void SetUp() override {
    HeldRunsFixture::SetUp();
    Start({});
  }

  void Start(std::vector<std::string> more) {
    std::vector<std::string> flags = {
        absl::StrCat("--max_store_bytes_per_job=", kPerJob),
        absl::StrCat("--max_store_bytes_total=", kTotal)};
    flags.insert(flags.end(), more.begin(), more.end());
    StartIssuing(flags);
  }

  // Sets `count` 1 MiB values under keys `prefix`0, `prefix`1, ...: the
  // bytes accepted (keys too), the last refusal in `refusal`.
  int64_t Offer(const HeldRun& held, const std::string& prefix, int count,
                grpc::Status& refusal) {
    int64_t accepted = 0;
    for (int k = 0; k < count; ++k) {
      v1::StoreSetRequest set;
      *set.mutable_agent() = held.id;
      set.set_run_id(held.run_id);
      set.set_key(absl::StrCat(prefix, k));
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

  // How many of `count` 1 MiB values were accepted.
  int SetValues(const HeldRun& held, const std::string& prefix, int count,
                grpc::Status& refusal) {
    return static_cast<int>(Offer(held, prefix, count, refusal) / kMiB);
  }

  // Offers the job's store its full share in 1 MiB values (16 MiB), going
  // on past refusals; the bytes accepted, and the last refusal in
  // `refusal`.
  int64_t Fill(const HeldRun& held, grpc::Status& refusal) {
    return Offer(held, "k", kPerJob / kMiB, refusal);
  }
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
                    "the share of self-chosen job tokens "
                    "(--legacy_job_tokens) already holds its maximum of "),
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

// Two issued credentials share the 32 MiB fairly: once the second waits
// for bytes, the first, at its fair half, cannot grow, and the bytes it
// frees go to the second.
TEST_F(StoreCapTest, BytesOneCredentialFreesGoToTheOneWaiting) {
  Start({absl::StrCat("--max_store_bytes_per_job=", kTotal)});
  std::vector<HeldRun> held(2);
  Hold(0, IssuedToken(0), held[0]);
  Hold(1, IssuedToken(1), held[1]);
  ASSERT_FALSE(HasFatalFailure());
  grpc::Status refusal;
  EXPECT_EQ(SetValues(held[0], "free/", 8, refusal), 8);
  EXPECT_EQ(SetValues(held[0], "keep/", 16, refusal), 16);
  EXPECT_EQ(SetValues(held[1], "b/", 8, refusal), 7);  // 32 MiB are held
  EXPECT_NE(refusal.error_message().find("(--max_store_bytes_total)"),
            std::string::npos)
      << refusal.error_message();

  v1::StoreDeleteRequest erase;
  *erase.mutable_agent() = held[0].id;
  erase.set_run_id(held[0].run_id);
  erase.set_prefix("free/");
  v1::StoreDeleteResponse erased;
  ASSERT_TRUE(
      stub_->StoreDelete(WithToken(held[0].token).get(), erase, &erased).ok());
  EXPECT_EQ(erased.deleted(), 8);
  EXPECT_EQ(SetValues(held[0], "more/", 1, refusal), 0);
  EXPECT_EQ(refusal.error_code(), grpc::RESOURCE_EXHAUSTED);
  EXPECT_NE(refusal.error_message().find(
                "its fair share while another credential waits "
                "(--max_store_bytes_total divided among the credentials "
                "using it)"),
            std::string::npos)
      << refusal.error_message();
  EXPECT_EQ(SetValues(held[1], "b2/", 8, refusal), 8)
      << "the 8 MiB freed are the waiting credential's";
  Release(held);
}

}  // namespace
}  // namespace reshard
