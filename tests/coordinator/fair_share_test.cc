// Jobs are shared fairly among shares (common/fair_shares.h): one share
// alone may hold every job its cap allows; once another waits for room,
// the first creates no job past its fair share, so the room a dropped job
// leaves goes to the one waiting.
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/fair_shares.h"
#include "coordinator/job_table.h"
#include "gtest/gtest.h"

namespace reshard::coordinator {
namespace {

class JobSharesTest : public ::testing::Test {
 protected:
  static CoordinatorLimits FourJobs() {
    CoordinatorLimits limits;
    limits.max_jobs = 4;
    limits.max_jobs_per_credential = 4;
    return limits;
  }

  absl::Status Create(const std::string& job, const std::string& share) {
    JoinInfo info;
    info.agent.job = job;
    info.world_size = 1;
    return table_.FindOrCreate(info, "", share).status();
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  CoordinatorLimits limits_ = FourJobs();
  InMemoryJobTable table_{limits_, [this] { return now_; }};
};

TEST_F(JobSharesTest, ARoomADroppedJobLeavesGoesToTheShareThatWaits) {
  for (const char* job : {"a0", "a1", "a2", "a3"}) {
    ASSERT_TRUE(Create(job, "a").ok()) << "alone, a may hold every job";
  }
  const absl::Status full = Create("b0", "b");
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            "agent.job: this server already holds its maximum of 4 jobs "
            "(--max_jobs); what is given back goes to the credentials below "
            "their fair share first, so try again");
  table_.ForgetIfAbandoned("a3", JobSpace::kOpen);  // 3 of 4 held by a; b waits
  table_.ForgetIfAbandoned("a2", JobSpace::kOpen);
  const absl::Status grow = Create("a4", "a");
  EXPECT_EQ(grow.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(grow.message(),
            "agent.job: the share of this job token holds 2 of the 4 jobs "
            "this server allows, its fair share while another credential "
            "waits (--max_jobs divided among the credentials using it); try "
            "again once it holds fewer");
  EXPECT_TRUE(Create("b0", "b").ok());
  EXPECT_TRUE(Create("b1", "b").ok());
  EXPECT_EQ(table_.List().size(), 4u);
  EXPECT_NE(table_.Find("a0", JobSpace::kOpen), nullptr)
      << "nothing held is taken away";
}

TEST_F(JobSharesTest, TheCapPerShareStillHoldsAndAWaitEndsWithItsWindow) {
  limits_.max_jobs_per_credential = 3;
  for (const char* job : {"a0", "a1", "a2"}) ASSERT_TRUE(Create(job, "a").ok());
  const absl::Status capped = Create("a3", "a");
  EXPECT_EQ(capped.message(),
            "agent.job: the share of this job token already holds its maximum "
            "of 3 jobs (--max_jobs_per_credential)");
  ASSERT_TRUE(Create("b0", "b").ok());
  EXPECT_FALSE(Create("c0", "c").ok());  // full: c waits
  table_.ForgetIfAbandoned("a2", JobSpace::kOpen);
  // a, b and c share 4 jobs: 2 each at most while c waits.
  EXPECT_FALSE(Create("a3", "a").ok());
  ASSERT_TRUE(Create("c0", "c").ok());
  table_.ForgetIfAbandoned("b0", JobSpace::kOpen);
  EXPECT_FALSE(Create("a3", "a").ok()) << "c, with 1 of its 2, still waits";
  now_ += FairShares::kWaitingWindow + absl::Seconds(1);
  EXPECT_TRUE(Create("a3", "a").ok()) << "c stopped trying";
}

}  // namespace
}  // namespace reshard::coordinator
