// What the Coordinator's core tests share: an agent's join and a small run.
#ifndef RESHARD_TESTS_COORDINATOR_COORDINATOR_CASES_H_
#define RESHARD_TESTS_COORDINATOR_COORDINATOR_CASES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "coordinator/coordinator.h"
#include "gtest/gtest.h"
#include "tests/planner/test_util.h"

namespace reshard::coordinator {

// The sessions the tests' Coordinators give: derived from the agent's
// identity, so that a test names a joined agent's session (Id) without
// keeping Join's answer. The server's are random (RandomSessions).
inline std::string TestSession(const AgentId& agent) {
  return absl::StrCat("session-", agent.job, "-", agent.rank, "-",
                      agent.incarnation);
}
inline SessionSource TestSessions() { return TestSession; }

// Rank `rank` of `job` as incarnation `incarnation`, with the session a
// Coordinator with TestSessions gave it.
inline AgentId Id(const std::string& job, int64_t rank, uint64_t incarnation) {
  AgentId id{job, rank, incarnation, ""};
  id.session = TestSession(id);
  return id;
}

// Rank `rank` of `job` (world size `world`) joining as incarnation
// 100 + rank unless given, with the session TestSessions gives it (a first
// join's is ignored; a rejoin of the same incarnation needs it).
inline JoinInfo Joining(const std::string& job, int64_t rank, int64_t world,
                        uint64_t incarnation = 0) {
  JoinInfo info;
  info.agent = Id(job, rank, incarnation == 0 ? 100 + rank : incarnation);
  info.world_size = world;
  info.version = kReshardVersion;
  info.protocol = kCoordinatorProtocol;
  info.host = "127.0.0.1";
  return info;
}

// S(0) -> R of 8 elements on a 1-D mesh of `world` ranks: 3 iterations
// after 1 warm-up, 5 s per collective.
inline std::shared_ptr<const RunSpec> SpecFor(int64_t world) {
  Mesh mesh = testing::MakeMesh({world});
  absl::StatusOr<Plan> plan =
      testing::PlanChecked(mesh, {8}, "S(0)", "R", PlanOptions());
  EXPECT_TRUE(plan.ok()) << plan.status();
  executor::BatchWork work =
      executor::BatchWork::OfPlan(mesh, *std::move(plan));
  return std::make_shared<const RunSpec>(
      RunSpec{std::move(mesh), std::move(work), 3, 1, 5});
}

}  // namespace reshard::coordinator

#endif  // RESHARD_TESTS_COORDINATOR_COORDINATOR_CASES_H_
