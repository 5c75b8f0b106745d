// A rank that was connected and went away fails a RunJob after the agent
// wait (UNAVAILABLE naming it, how and since when) instead of at the call's
// deadline; a rank that never joined is waited for until the deadline; a
// rank back within the wait lets the run be admitted. The Coordinator's
// clock is moved by hand; its waits poll it every 100 ms.
#include <atomic>
#include <thread>

#include "coordinator/coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_cases.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;

class LostRankTest : public ::testing::Test {
 protected:
  LostRankTest() {
    limits_.agent_wait_seconds = 10;
    now_ = absl::FromUnixSeconds(1'800'000'000);
  }
  void TearDown() override { c_.Shutdown("test over"); }
  // Ranks of `job` joined and connected; their mailboxes.
  std::vector<std::shared_ptr<Mailbox>> Connect(const std::string& job,
                                                int64_t world,
                                                std::vector<int64_t> ranks) {
    std::vector<std::shared_ptr<Mailbox>> boxes(world);
    for (int64_t r : ranks) {
      EXPECT_TRUE(c_.Join(Joining(job, r, world)).ok());
      absl::StatusOr<std::shared_ptr<Mailbox>> box =
          c_.Connect(Id(job, r, 100 + r));
      EXPECT_TRUE(box.ok()) << box.status();
      if (box.ok()) boxes[r] = *box;
    }
    return boxes;
  }
  absl::Time Now() {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

  CoordinatorLimits limits_;
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  Coordinator c_{limits_, [this] { return Now(); }, TestSessions()};
};

TEST_F(LostRankTest, ALostRankFailsTheCallAfterTheAgentWait) {
  auto boxes = Connect("j", 3, {0, 1, 2});
  c_.Disconnect(Id("j", 1, 101), boxes[1]);  // killed between runs
  std::atomic<bool> returned{false};
  absl::StatusOr<RunOutcome> out;
  std::thread caller([&] {
    out = c_.RunJob("j", SpecFor(3), absl::Now() + absl::Seconds(60), {});
    returned = true;
  });
  Advance(absl::Seconds(9));
  // The one fixed sleep: that the call is still waiting is an absence, and
  // no state marks a poll that chose to wait on; give it three of its
  // 100 ms polls to return wrongly.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE(returned);
  Advance(absl::Seconds(1));
  caller.join();  // within a poll of the wait's end, not at the deadline
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(
      out.status().message(),
      HasSubstr("job \"j\" lost a rank for longer than --agent_wait_seconds "
                "(10 s): rank 1 (its agent's dispatch stream closed 10.0 s "
                "ago, at 2027-01-15T08:00:00Z)"));
}

TEST_F(LostRankTest, TheCallsOwnWaitOverridesTheServers) {
  auto boxes = Connect("j", 2, {0, 1});
  c_.Disconnect(Id("j", 0, 100), boxes[0]);
  ASSERT_TRUE(c_.Leave(Id("j", 1, 101)).ok());
  Advance(absl::Seconds(3));
  auto spec = std::make_shared<RunSpec>(*SpecFor(2));
  spec->agent_wait_seconds = 2;
  absl::StatusOr<RunOutcome> out =
      c_.RunJob("j", spec, absl::Now() + absl::Seconds(60), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(out.status().message(),
              HasSubstr("lost ranks for longer than --agent_wait_seconds (2 "
                        "s): rank 0"));
  EXPECT_THAT(
      out.status().message(),
      HasSubstr("rank 0 (its agent's dispatch stream closed 3.0 s ago"));
  EXPECT_THAT(out.status().message(),
              HasSubstr("rank 1 (its agent left the job 3.0 s ago"));
  spec->agent_wait_seconds = -1;
  EXPECT_EQ(c_.RunJob("j", spec, absl::Now() + absl::Seconds(1), {})
                .status()
                .message(),
            "agent_wait_seconds: -1 is outside [0, 86400] (0: the server's)");
}

TEST_F(LostRankTest, ARankThatNeverJoinedIsWaitedForUntilTheDeadline) {
  Connect("j", 2, {0});
  Advance(absl::Hours(1));
  absl::StatusOr<RunOutcome> out =
      c_.RunJob("j", SpecFor(2), absl::Now() + absl::Milliseconds(300), {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(),
              HasSubstr("was not ready by the deadline: ranks 1"));
}

TEST_F(LostRankTest, ARankBackWithinTheWaitIsRunOn) {
  auto boxes = Connect("j", 2, {0, 1});
  c_.Disconnect(Id("j", 1, 101), boxes[1]);
  Advance(absl::Seconds(5));
  std::shared_ptr<Mailbox> back = Connect("j", 2, {1})[1];
  Advance(absl::Seconds(60));  // long past the wait: it no longer counts
  // The run is admitted and dispatched: every rank's mailbox gets it.
  absl::StatusOr<RunOutcome> out;
  std::thread caller([&] {
    out = c_.RunJob("j", SpecFor(2), absl::Now() + absl::Seconds(2), {});
  });
  std::optional<WorkItem> item = back->Pop(absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->kind, WorkItem::Kind::kRun);
  caller.join();  // no reports: it ends at its deadline
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace reshard::coordinator
