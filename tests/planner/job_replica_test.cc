// planner/job_replica.h: a job's replica is a function of the job and the
// set of replicas (not their order), spreads jobs over replicas, moves only
// the removed replica's jobs when one leaves, and the replica list parses
// as reshardctl's --server and the agent's --server give it.
#include "common/job_replica.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/json_lite.h"

namespace reshard {
namespace {

const std::vector<std::string> kReplicas = {"10.0.0.1:50051", "10.0.0.2:50051",
                                            "10.0.0.3:50051"};

std::string JobName(int i) { return absl::StrCat("job-", i); }

TEST(JobReplicaTest, EmptyAndSingleLists) {
  EXPECT_EQ(ReplicaForJob("train", {}), "");
  EXPECT_EQ(ReplicaIndexForJob("train", {}), 0u);
  EXPECT_EQ(ReplicaForJob("train", {"127.0.0.1:1"}), "127.0.0.1:1");
}

TEST(JobReplicaTest, KnownValuesAreStable) {
  // Agents and callers built at different times must agree: pinned answers
  // (a change here moves running jobs to other replicas).
  EXPECT_EQ(ReplicaIndexForJob("train", kReplicas), 0u);
  EXPECT_EQ(ReplicaIndexForJob("eval", kReplicas), 1u);
  EXPECT_EQ(ReplicaIndexForJob("job-7", kReplicas), 1u);
  EXPECT_EQ(ReplicaIndexForJob("", kReplicas), 2u);
  EXPECT_EQ(ReplicaIndexForJob("d", kReplicas), 0u);
}

// The vectors the Python client (python/reshard/job_replica.py) is held to
// as well.
TEST(JobReplicaTest, SharedVectors) {
  const std::vector<testing::Json> cases = testing::LoadJsonLines(
      std::string(RESHARD_TEST_DATA) + "/job_replica_vectors.jsonl");
  ASSERT_GE(cases.size(), 40u);
  for (const testing::Json& c : cases) {
    EXPECT_EQ(ReplicaIndexForJob(c["job"].string, c["replicas"].Strings()),
              static_cast<size_t>(c["index"].Int()))
        << "job \"" << c["job"].string << "\"";
  }
}

TEST(JobReplicaTest, OrderOfTheListDoesNotMatter) {
  std::vector<std::string> shuffled = kReplicas;
  for (int i = 0; i < 200; ++i) {
    const std::string want = ReplicaForJob(JobName(i), kReplicas);
    std::sort(shuffled.begin(), shuffled.end());
    do {
      EXPECT_EQ(ReplicaForJob(JobName(i), shuffled), want) << JobName(i);
    } while (std::next_permutation(shuffled.begin(), shuffled.end()));
  }
}

TEST(JobReplicaTest, SpreadsJobsOverReplicas) {
  std::map<std::string, int> count;
  for (int i = 0; i < 3000; ++i) ++count[ReplicaForJob(JobName(i), kReplicas)];
  ASSERT_EQ(count.size(), 3u);
  for (const auto& [replica, n] : count) {
    EXPECT_GT(n, 800) << replica;  // 1000 expected
  }
}

TEST(JobReplicaTest, RemovingAReplicaMovesOnlyItsJobs) {
  const std::vector<std::string> two = {kReplicas[0], kReplicas[2]};
  int moved = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string before = ReplicaForJob(JobName(i), kReplicas);
    const std::string after = ReplicaForJob(JobName(i), two);
    if (before != kReplicas[1]) {
      EXPECT_EQ(after, before) << JobName(i);
    } else {
      ++moved;
    }
  }
  EXPECT_GT(moved, 0);
}

TEST(JobReplicaTest, DuplicateEntriesNameTheFirst) {
  const std::vector<std::string> dup = {"a:1", "b:2", "a:1"};
  for (int i = 0; i < 100; ++i) {
    EXPECT_NE(ReplicaIndexForJob(JobName(i), dup), 2u);
  }
}

TEST(JobReplicaTest, SplitsTheServerFlag) {
  EXPECT_EQ(SplitReplicaList("127.0.0.1:1"),
            (std::vector<std::string>{"127.0.0.1:1"}));
  EXPECT_EQ(SplitReplicaList(" a:1, b:2 ,,c:3,"),
            (std::vector<std::string>{"a:1", "b:2", "c:3"}));
  EXPECT_TRUE(SplitReplicaList(" , ").empty());
}

}  // namespace
}  // namespace reshard
