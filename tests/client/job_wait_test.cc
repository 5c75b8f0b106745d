// What `job run` says while it waits (client/job_wait.h): the ranks not
// connected, told apart from ranks that never joined; nothing when every
// rank is connected; at most 16 named.
#include "client/job_wait.h"

#include "gtest/gtest.h"

namespace reshard::client {
namespace {

JobInfo JobOf(int64_t world, std::vector<std::pair<int64_t, bool>> agents) {
  JobInfo job;
  job.name = "jt";
  job.world_size = world;
  for (auto [rank, connected] : agents) {
    JobAgentInfo a;
    a.rank = rank;
    a.connected = connected;
    job.agents.push_back(a);
  }
  return job;
}

TEST(WaitingForTest, NamesRanksNotConnectedAndNeverJoined) {
  EXPECT_EQ(WaitingFor(JobOf(4, {{0, true}, {1, false}, {3, true}})),
            "job jt: waiting for rank 1 (not connected), rank 2 (never "
            "joined)");
  EXPECT_EQ(WaitingFor(JobOf(2, {{0, true}, {1, true}})), "");
}

TEST(WaitingForTest, NamesAtMostSixteen) {
  const std::string line = WaitingFor(JobOf(40, {}));
  EXPECT_NE(line.find("rank 15 (never joined) and 24 more"), std::string::npos)
      << line;
  EXPECT_EQ(line.find("rank 16 "), std::string::npos) << line;
}

}  // namespace
}  // namespace reshard::client
