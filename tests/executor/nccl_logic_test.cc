// Tests of the NCCL backend's pure logic, run on every machine (no GPU, no
// CUDA): the ncclCommSplit color and key of every group (GroupSplit) and
// the per-call timeout/abort state machine (CollectiveWatch).
#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "absl/time/time.h"
#include "executor/backends/nccl/collective_watch.h"
#include "executor/backends/nccl/group_split.h"
#include "executor/backends/nccl/pending_collectives.h"
#include "executor/run/cancel_signal.h"
#include "gtest/gtest.h"
#include "planner/core/mesh.h"

namespace reshard::executor {
namespace {

// A random mesh of 1-4 dims of sizes 1-4, with a random rank map half of
// the time.
Mesh RandomMesh(std::mt19937& rng) {
  MeshSpec spec;
  const int ndim = std::uniform_int_distribution<int>(1, 4)(rng);
  int64_t world = 1;
  for (int d = 0; d < ndim; ++d) {
    spec.shape.push_back(std::uniform_int_distribution<int>(1, 4)(rng));
    world *= spec.shape.back();
  }
  if (rng() % 2 == 0) {
    spec.rank_map.resize(world);
    std::iota(spec.rank_map.begin(), spec.rank_map.end(), 0);
    std::shuffle(spec.rank_map.begin(), spec.rank_map.end(), rng);
  }
  return *Mesh::Create(spec);
}

// Every ordered tuple of distinct dims (every group, in every dim order).
std::vector<Group> AllGroups(int ndim) {
  std::vector<Group> groups;
  for (int mask = 1; mask < (1 << ndim); ++mask) {
    Group g;
    for (int d = 0; d < ndim; ++d) {
      if (mask & (1 << d)) g.push_back(d);
    }
    do {
      groups.push_back(g);
    } while (std::next_permutation(g.begin(), g.end()));
  }
  return groups;
}

// For one mesh and group: keys follow the group order, colors are shared
// by a group's members and distinct between its groups, and the split from
// the group's ranks (what the provider sees) agrees.
void CheckGroup(const Mesh& mesh, const Group& group) {
  std::map<int, int64_t> first_member_of_color;
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    const absl::StatusOr<GroupSplit> split = SplitForGroup(mesh, group, p);
    ASSERT_TRUE(split.ok()) << split.status();
    const std::vector<int64_t> members = mesh.GroupPositions(p, group);
    const std::vector<int64_t> ranks = mesh.GroupRanks(p, group);
    EXPECT_EQ(split->key, mesh.IndexInGroup(p, group));
    EXPECT_EQ(members[split->key], p);
    EXPECT_GE(split->color, 0);
    EXPECT_EQ(split->color, *std::min_element(ranks.begin(), ranks.end()));
    for (size_t i = 0; i < members.size(); ++i) {
      const absl::StatusOr<GroupSplit> other =
          SplitForGroup(mesh, group, members[i]);
      ASSERT_TRUE(other.ok());
      EXPECT_EQ(other->color, split->color) << "member " << i;
      EXPECT_EQ(other->key, static_cast<int>(i));
    }
    // Each color names one group: the one whose first member is members[0].
    auto [it, inserted] =
        first_member_of_color.emplace(split->color, members[0]);
    EXPECT_EQ(it->second, members[0]) << "color " << split->color;
    const absl::StatusOr<GroupSplit> from_ranks =
        SplitForRanks(ranks, mesh.RankAt(p));
    ASSERT_TRUE(from_ranks.ok()) << from_ranks.status();
    EXPECT_EQ(*from_ranks, *split);
  }
  EXPECT_EQ(static_cast<int64_t>(first_member_of_color.size()),
            mesh.world_size() / mesh.GroupSize(group));
}

TEST(GroupSplitTest, RandomMeshesAllGroupsAnyOrderAndRankMap) {
  std::mt19937 rng(20240611);
  for (int trial = 0; trial < 60; ++trial) {
    const Mesh mesh = RandomMesh(rng);
    for (const Group& group : AllGroups(mesh.ndim())) {
      SCOPED_TRACE(mesh.CanonicalText(true) + " group " +
                   mesh.GroupName(group));
      CheckGroup(mesh, group);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(GroupSplitTest, KeysFollowANonAscendingDimOrder) {
  // 2x3 mesh, group (B, A): B outermost, so position 1 (A=0, B=1) is
  // member 2 and position 3 (A=1, B=0) is member 1.
  const Mesh mesh = *Mesh::Create({.shape = {2, 3}, .rank_map = {}});
  const Group ba = {1, 0};
  EXPECT_EQ(SplitForGroup(mesh, ba, 1)->key, 2);
  EXPECT_EQ(SplitForGroup(mesh, ba, 3)->key, 1);
  EXPECT_EQ(SplitForGroup(mesh, ba, 5)->key, 5);
  EXPECT_EQ(SplitForGroup(mesh, ba, 5)->color, 0);
  // With a rank map the color is the group's smallest global rank.
  const Mesh mapped =
      *Mesh::Create({.shape = {2, 3}, .rank_map = {5, 4, 3, 2, 1, 0}});
  const Group b = {1};
  EXPECT_EQ(*SplitForGroup(mapped, b, 0), (GroupSplit{3, 0}));
  EXPECT_EQ(*SplitForGroup(mapped, b, 4), (GroupSplit{0, 1}));
}

TEST(GroupSplitTest, RejectsBadInput) {
  const Mesh mesh = *Mesh::Create({.shape = {2, 2}});
  EXPECT_EQ(SplitForGroup(mesh, Group{0, 0}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitForGroup(mesh, Group{2}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitForGroup(mesh, Group{}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitForGroup(mesh, Group{0}, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitForGroup(mesh, Group{0}, -1).status().code(),
            absl::StatusCode::kInvalidArgument);

  const std::vector<int64_t> ranks = {6, 2, 4};
  EXPECT_EQ(*SplitForRanks(ranks, 4), (GroupSplit{2, 2}));
  EXPECT_EQ(SplitForRanks(ranks, 3).status().message(),
            "ranks: rank 3 is not a member");
  EXPECT_EQ(SplitForRanks(std::vector<int64_t>{1, 2, 1}, 1).status().message(),
            "ranks[2]: rank 1 repeats");
  EXPECT_EQ(SplitForRanks(std::vector<int64_t>{-1, 0}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitForRanks(std::vector<int64_t>{0, int64_t{1} << 31}, 0)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

class CollectiveWatchTest : public ::testing::Test {
 protected:
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
  CollectiveWatch watch_{absl::Seconds(30)};
};

TEST_F(CollectiveWatchTest, WaitsThenCompletes) {
  ASSERT_TRUE(watch_.Begin("all_gather", "A_C", t0_).ok());
  EXPECT_TRUE(watch_.in_flight());
  EXPECT_EQ(watch_.deadline(), t0_ + absl::Seconds(30));
  EXPECT_EQ(watch_.Observe(WatchPoll::InProgress(), t0_), WatchAction::kWait);
  EXPECT_EQ(watch_.Observe(WatchPoll::InProgress(), t0_ + absl::Seconds(29)),
            WatchAction::kWait);
  EXPECT_EQ(watch_.Observe(WatchPoll::Done(), t0_ + absl::Seconds(29)),
            WatchAction::kComplete);
  EXPECT_TRUE(watch_.status().ok());
  EXPECT_FALSE(watch_.in_flight());
  EXPECT_FALSE(watch_.aborted());
  // The next call starts a fresh deadline.
  ASSERT_TRUE(watch_.Begin("all_reduce", "A", t0_ + absl::Seconds(40)).ok());
  EXPECT_EQ(watch_.Observe(WatchPoll::InProgress(), t0_ + absl::Seconds(60)),
            WatchAction::kWait);
  EXPECT_EQ(watch_.Observe(WatchPoll::Done(), t0_ + absl::Seconds(61)),
            WatchAction::kComplete);
}

TEST_F(CollectiveWatchTest, DoneAtTheDeadlineCompletes) {
  ASSERT_TRUE(watch_.Begin("all_gather", "A_C", t0_).ok());
  EXPECT_EQ(watch_.Observe(WatchPoll::Done(), t0_ + absl::Seconds(31)),
            WatchAction::kComplete);
  EXPECT_TRUE(watch_.status().ok());
}

TEST_F(CollectiveWatchTest, TimeoutAbortsAndLaterCallsFailFast) {
  ASSERT_TRUE(watch_.Begin("all_gather", "A_C", t0_).ok());
  EXPECT_EQ(watch_.Observe(WatchPoll::InProgress(), t0_ + absl::Seconds(30)),
            WatchAction::kAbort);
  EXPECT_TRUE(watch_.aborted());
  EXPECT_EQ(watch_.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(watch_.status().message(),
            "all_gather on group A_C: no progress within 30 s; communicator "
            "aborted");
  const absl::Status again =
      watch_.Begin("all_reduce", "B", t0_ + absl::Seconds(31));
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(again.message(),
            "all_reduce on group B: the communicator was aborted after an "
            "earlier failure (all_gather on group A_C: no progress within 30 "
            "s; communicator aborted)");
  // The abort stays: polls keep saying abort, the status keeps the cause.
  EXPECT_EQ(watch_.Observe(WatchPoll::Done(), t0_ + absl::Seconds(32)),
            WatchAction::kAbort);
  EXPECT_EQ(watch_.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(CollectiveWatchTest, AsyncErrorAbortsWithNcclText) {
  ASSERT_TRUE(watch_.Begin("reduce_scatter", "B_A", t0_).ok());
  EXPECT_EQ(watch_.Observe(WatchPoll::InProgress(), t0_ + absl::Seconds(1)),
            WatchAction::kWait);
  EXPECT_EQ(watch_.Observe(WatchPoll::Error("NCCL asynchronous error: remote "
                                            "process exited or there was a "
                                            "network error"),
                           t0_ + absl::Seconds(2)),
            WatchAction::kAbort);
  EXPECT_EQ(watch_.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(watch_.status().message(),
            "reduce_scatter on group B_A: NCCL asynchronous error: remote "
            "process exited or there was a network error; communicator "
            "aborted");
  EXPECT_EQ(watch_.Begin("all_to_all", "B_A", t0_ + absl::Seconds(3)).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(CollectiveWatchTest, EnqueueErrorAbortsAtOnce) {
  ASSERT_TRUE(watch_.Begin("all_to_all", "C", t0_).ok());
  EXPECT_EQ(
      watch_.Observe(WatchPoll::Error("all_to_all: invalid argument"), t0_),
      WatchAction::kAbort);
  EXPECT_EQ(watch_.status().code(), absl::StatusCode::kInternal);
}

TEST_F(CollectiveWatchTest, OneCallAtATime) {
  ASSERT_TRUE(watch_.Begin("all_gather", "A", t0_).ok());
  const absl::Status second = watch_.Begin("all_reduce", "B", t0_);
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.message(),
            "all_reduce on group B: all_gather on group A is still in flight");
  // The refused call changed nothing: the first still completes.
  EXPECT_EQ(watch_.Observe(WatchPoll::Done(), t0_), WatchAction::kComplete);
}

TEST_F(CollectiveWatchTest, ObserveWithoutACallInFlight) {
  EXPECT_EQ(watch_.Observe(WatchPoll::InProgress(), t0_),
            WatchAction::kComplete);
  EXPECT_FALSE(watch_.aborted());
}

TEST_F(CollectiveWatchTest, FractionalTimeoutInTheMessage) {
  CollectiveWatch watch(absl::Milliseconds(1500));
  ASSERT_TRUE(watch.Begin("ncclCommSplit", "A_C", t0_).ok());
  EXPECT_EQ(watch.Observe(WatchPoll::InProgress(), t0_ + absl::Seconds(1)),
            WatchAction::kWait);
  EXPECT_EQ(watch.Observe(WatchPoll::InProgress(), t0_ + absl::Seconds(2)),
            WatchAction::kAbort);
  EXPECT_EQ(watch.status().message(),
            "ncclCommSplit on group A_C: no progress within 1.5 s; "
            "communicator aborted");
}

// A cancelled run (the agent's cancel) ends the call in flight at once,
// long before its deadline, and the communicator stays aborted.
TEST_F(CollectiveWatchTest, CancelAbortsTheCallInFlight) {
  ASSERT_TRUE(watch_.Begin("all_to_all", "A_C", t0_).ok());
  EXPECT_EQ(watch_.Observe(WatchPoll::InProgress(), t0_ + absl::Seconds(1)),
            WatchAction::kWait);
  EXPECT_EQ(watch_.Cancel("by the Coordinator"), WatchAction::kAbort);
  EXPECT_TRUE(watch_.aborted());
  EXPECT_EQ(watch_.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(watch_.status().message(),
            "all_to_all on group A_C: cancelled (by the Coordinator); "
            "communicator aborted");
  const absl::Status later = watch_.Begin("all_gather", "A_C", t0_);
  EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(later.message().find("cancelled (by the Coordinator)"),
            std::string::npos)
      << later;
  // A second cancel keeps the first reason.
  EXPECT_EQ(watch_.Cancel("again"), WatchAction::kAbort);
  EXPECT_NE(watch_.status().message().find("by the Coordinator"),
            std::string::npos);
}

TEST_F(CollectiveWatchTest, CancelBetweenCallsAbortsToo) {
  EXPECT_EQ(watch_.Cancel("the dispatch stream ended"), WatchAction::kAbort);
  EXPECT_EQ(watch_.status().message(),
            "cancelled (the dispatch stream ended); communicator aborted");
  EXPECT_FALSE(watch_.Begin("all_reduce", "A", t0_).ok());
}

TEST_F(CollectiveWatchTest, FailAbortsAnIdleWatchAndKeepsTheFirstCause) {
  watch_.Fail(absl::InternalError("all_gather on group A: x; aborted"));
  EXPECT_TRUE(watch_.aborted());
  const absl::Status later = watch_.Begin("all_reduce", "B", t0_);
  EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(later.message(),
            "all_reduce on group B: the communicator was aborted after an "
            "earlier failure (all_gather on group A: x; aborted)");
  watch_.Fail(absl::CancelledError("second"));
  EXPECT_EQ(watch_.status().code(), absl::StatusCode::kInternal);
}

class PendingCollectivesTest : public ::testing::Test {
 protected:
  absl::Time At(int seconds) const { return t0_ + absl::Seconds(seconds); }

  const absl::Time t0_ = absl::FromUnixSeconds(1000);
  PendingCollectives pending_{absl::Seconds(30)};
};

// Calls retire oldest first; the run's one wait ends when the last does.
TEST_F(PendingCollectivesTest, RetiresInOrderAndCompletesWhenEmpty) {
  EXPECT_EQ(pending_.Observe(WatchPoll::InProgress(), t0_),
            WatchAction::kComplete);
  ASSERT_TRUE(pending_.Add("all_gather", "A", 7, t0_).ok());
  ASSERT_TRUE(pending_.Add("all_reduce", "B", 8, t0_).ok());
  ASSERT_TRUE(pending_.Add("all_to_all", "A_B", 9, t0_).ok());
  EXPECT_EQ(pending_.size(), 3u);
  EXPECT_EQ(pending_.oldest(), 7);
  EXPECT_EQ(pending_.Observe(WatchPoll::InProgress(), At(1)),
            WatchAction::kWait);
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(2)), WatchAction::kWait);
  EXPECT_EQ(pending_.oldest(), 8);
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(3)), WatchAction::kWait);
  EXPECT_EQ(pending_.oldest(), 9);
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(4)), WatchAction::kComplete);
  EXPECT_TRUE(pending_.empty());
  EXPECT_TRUE(pending_.status().ok());
  // Later calls queue again from empty.
  ASSERT_TRUE(pending_.Add("all_gather", "A", 1, At(5)).ok());
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(6)), WatchAction::kComplete);
}

// Each call gets the whole timeout from when the one before it finished:
// calls of 20 s and 29 s run 49 s without a timeout.
TEST_F(PendingCollectivesTest, EachCallsTimeoutStartsWhenTheOneBeforeEnds) {
  for (int64_t token : {0, 1, 2}) {
    ASSERT_TRUE(pending_.Add("all_gather", "A", token, t0_).ok());
  }
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(20)), WatchAction::kWait);
  EXPECT_EQ(pending_.Observe(WatchPoll::InProgress(), At(49)),
            WatchAction::kWait);
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(49)), WatchAction::kWait);
  EXPECT_EQ(pending_.Observe(WatchPoll::InProgress(), At(78)),
            WatchAction::kWait);
  EXPECT_EQ(pending_.Observe(WatchPoll::InProgress(), At(79)),
            WatchAction::kAbort);
  EXPECT_EQ(pending_.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(pending_.status().message(),
            "all_gather on group A: no progress within 30 s; communicator "
            "aborted");
  EXPECT_TRUE(pending_.empty());
}

TEST_F(PendingCollectivesTest, AnErrorAbortsNamingTheOldestCall) {
  ASSERT_TRUE(pending_.Add("reduce_scatter", "B_A", 0, t0_).ok());
  ASSERT_TRUE(pending_.Add("all_gather", "A", 1, t0_).ok());
  EXPECT_EQ(pending_.Observe(WatchPoll::Error("NCCL asynchronous error: "
                                              "remote process exited"),
                             At(1)),
            WatchAction::kAbort);
  EXPECT_TRUE(pending_.aborted());
  EXPECT_TRUE(pending_.empty());
  EXPECT_EQ(pending_.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(pending_.status().message(),
            "reduce_scatter on group B_A: NCCL asynchronous error: remote "
            "process exited; communicator aborted");
  // Every later call fails fast with the cause; polls keep aborting.
  const absl::Status later = pending_.Add("all_reduce", "C", 2, At(2));
  EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(later.message().find("remote process exited"), std::string::npos)
      << later;
  EXPECT_TRUE(pending_.empty());
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(3)), WatchAction::kAbort);
}

TEST_F(PendingCollectivesTest, CancelAbortsPendingCallsAndAnIdleQueue) {
  ASSERT_TRUE(pending_.Add("all_to_all", "A_C", 0, t0_).ok());
  EXPECT_EQ(pending_.Cancel("by the Coordinator"), WatchAction::kAbort);
  EXPECT_TRUE(pending_.empty());
  EXPECT_EQ(pending_.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(pending_.status().message(),
            "all_to_all on group A_C: cancelled (by the Coordinator); "
            "communicator aborted");
  EXPECT_EQ(pending_.Cancel("again"), WatchAction::kAbort);
  EXPECT_NE(pending_.status().message().find("by the Coordinator"),
            std::string::npos);

  PendingCollectives idle(absl::Seconds(1));
  EXPECT_EQ(idle.Cancel("the dispatch stream ended"), WatchAction::kAbort);
  EXPECT_EQ(idle.Add("all_gather", "A", 0, t0_).code(),
            absl::StatusCode::kFailedPrecondition);
}

// A call that failed before it was pending (its enqueue timed out) fails
// the calls queued before it and every later one with its cause.
TEST_F(PendingCollectivesTest, FailDropsPendingCallsAndKeepsTheCause) {
  ASSERT_TRUE(pending_.Add("all_gather", "A", 0, t0_).ok());
  pending_.Fail(absl::DeadlineExceededError(
      "all_reduce on group B: no progress within 30 s; communicator aborted"));
  EXPECT_TRUE(pending_.empty());
  EXPECT_TRUE(pending_.aborted());
  EXPECT_EQ(pending_.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(pending_.Observe(WatchPoll::Done(), At(1)), WatchAction::kAbort);
  const absl::Status later = pending_.Add("all_to_all", "C", 1, At(2));
  EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(later.message().find("all_reduce on group B"), std::string::npos)
      << later;
}

TEST(CancelSignalTest, KeepsTheFirstReason) {
  CancelSignal signal;
  EXPECT_FALSE(signal.raised());
  EXPECT_EQ(signal.why(), "");
  signal.Raise("first");
  signal.Raise("second");
  EXPECT_TRUE(signal.raised());
  EXPECT_EQ(signal.why(), "first");
}

}  // namespace
}  // namespace reshard::executor
