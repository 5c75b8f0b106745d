// server/planning_pool.h: a credential's searches run one at a time while
// another credential's proceed, the queue bounds refuse naming their flag,
// and destruction runs what is queued.
#include "server/planning_pool.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard::server {
namespace {

using ::testing::HasSubstr;

// Waits (bounded) until `done` holds.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

TEST(PlanningPoolTest, ACredentialsSearchesRunOneAtATime) {
  PlanningPool pool({2, 8, 4});
  absl::Notification release_a;
  std::atomic<int> a_started{0}, b_done{0};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(pool.Submit(1,
                            [&] {
                              ++a_started;
                              release_a.WaitForNotification();
                            })
                    .ok());
  }
  ASSERT_TRUE(pool.Submit(2, [&] { ++b_done; }).ok());
  // B runs on the second worker while A's first holds the other; A's
  // second waits for A's first, not for a worker.
  EXPECT_TRUE(Eventually([&] { return b_done == 1; }));
  EXPECT_TRUE(Eventually([&] { return pool.running() == 1; }));
  EXPECT_EQ(a_started, 1);
  EXPECT_EQ(pool.queued(), 1);
  release_a.Notify();
  EXPECT_TRUE(
      Eventually([&] { return a_started == 2 && pool.running() == 0; }));
}

TEST(PlanningPoolTest, FullQueuesRefuseNamingTheirFlag) {
  PlanningPool pool({1, 3, 2});
  absl::Notification release;
  ASSERT_TRUE(pool.Submit(1, [&] { release.WaitForNotification(); }).ok());
  ASSERT_TRUE(Eventually([&] { return pool.running() == 1; }));
  ASSERT_TRUE(pool.Submit(1, [] {}).ok());
  ASSERT_TRUE(pool.Submit(1, [] {}).ok());
  PlanningPool::Refusal why{};
  absl::Status s = pool.Submit(
      1, [] {}, &why);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("--planning_queue_per_credential"));
  EXPECT_EQ(why, PlanningPool::Refusal::kCredentialQueueFull);
  ASSERT_TRUE(pool.Submit(2, [] {}).ok());
  s = pool.Submit(
      3, [] {}, &why);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("3 searches already wait for a worker "
                                     "(--planning_queue)"));
  EXPECT_EQ(why, PlanningPool::Refusal::kQueueFull);
  release.Notify();
}

TEST(PlanningPoolTest, DestructionRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    PlanningPool pool({1, 16, 16});
    for (int i = 0; i < 10; ++i)
      ASSERT_TRUE(pool.Submit(7, [&] { ++ran; }).ok());
  }
  EXPECT_EQ(ran, 10);
}

}  // namespace
}  // namespace reshard::server
