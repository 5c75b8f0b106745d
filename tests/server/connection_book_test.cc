#include "server/connection_book.h"

#include <set>

#include "gtest/gtest.h"

namespace reshard::server {
namespace {

using Verdict = ConnectionBook::Verdict;

TEST(ConnectionBookTest, RefusesPastTheCapPerPeerButAdmitsOtherPeers) {
  ConnectionBook book({/*max_total=*/0, /*max_per_peer=*/2});
  book.Add(10, 100, "10.0.0.1");
  EXPECT_EQ(book.Check("10.0.0.1"), Verdict::kAdmit);
  book.Add(11, 101, "10.0.0.1");
  EXPECT_EQ(book.Check("10.0.0.1"), Verdict::kPeer);
  EXPECT_EQ(book.Check("10.0.0.2"), Verdict::kAdmit);
  EXPECT_EQ(book.OpenFrom("10.0.0.1"), 2);
  EXPECT_EQ(book.OpenFrom("10.0.0.2"), 0);
}

TEST(ConnectionBookTest, RefusesPastTheTotalWhateverThePeer) {
  ConnectionBook book({/*max_total=*/2, /*max_per_peer=*/0});
  book.Add(10, 100, "a");
  book.Add(11, 101, "b");
  EXPECT_EQ(book.Check("c"), Verdict::kTotal);
  EXPECT_EQ(book.open(), 2);
}

TEST(ConnectionBookTest, SweepForgetsClosedOrReusedDescriptors) {
  ConnectionBook book({/*max_total=*/0, /*max_per_peer=*/2});
  book.Add(10, 100, "a");
  book.Add(11, 101, "a");
  book.Add(12, 102, "b");
  // fd 10 was closed; fd 11 now names another file (inode 999).
  const std::set<std::pair<int, uint64_t>> live = {{11, 999}, {12, 102}};
  book.Sweep([&](int fd, uint64_t inode) { return live.count({fd, inode}); });
  EXPECT_EQ(book.open(), 1);
  EXPECT_EQ(book.OpenFrom("a"), 0);
  EXPECT_EQ(book.OpenFrom("b"), 1);
  EXPECT_EQ(book.Check("a"), Verdict::kAdmit);
}

TEST(ConnectionBookTest, AReusedDescriptorReplacesItsOldConnection) {
  ConnectionBook book({/*max_total=*/0, /*max_per_peer=*/1});
  book.Add(10, 100, "a");
  // gRPC closed fd 10 and the next accept got it back before a sweep.
  book.Add(10, 200, "b");
  EXPECT_EQ(book.open(), 1);
  EXPECT_EQ(book.OpenFrom("a"), 0);
  EXPECT_EQ(book.Check("a"), Verdict::kAdmit);
  EXPECT_EQ(book.Check("b"), Verdict::kPeer);
}

// Unset, the per-address cap is half the total, so one address never holds
// every slot; the start-up warning fires exactly when it could.
TEST(ConnectionBookTest, TheDefaultPerPeerCapLeavesRoomForOthers) {
  EXPECT_EQ(DefaultPerPeerCap(768), 384);
  EXPECT_EQ(DefaultPerPeerCap(1), 1);
  EXPECT_EQ(DefaultPerPeerCap(0), 0);
  EXPECT_FALSE(OnePeerTakesAll({768, DefaultPerPeerCap(768)}));
  EXPECT_TRUE(OnePeerTakesAll({768, 0}));
  EXPECT_TRUE(OnePeerTakesAll({768, 1024}));
  EXPECT_TRUE(OnePeerTakesAll({768, 768}));
  EXPECT_FALSE(OnePeerTakesAll({0, 0}));
  ConnectionBook book({/*max_total=*/4, DefaultPerPeerCap(4)});
  book.Add(10, 100, "a");
  book.Add(11, 101, "a");
  EXPECT_EQ(book.Check("a"), Verdict::kPeer);
  EXPECT_EQ(book.Check("b"), Verdict::kAdmit);
}

}  // namespace
}  // namespace reshard::server
