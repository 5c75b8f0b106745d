// What the Coordinator's core tests share: an agent's join and a small run.
#ifndef RESHARD_TESTS_COORDINATOR_COORDINATOR_CASES_H_
#define RESHARD_TESTS_COORDINATOR_COORDINATOR_CASES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "common/version.h"
#include "coordinator/coordinator.h"
#include "gtest/gtest.h"
#include "tests/planner/test_util.h"

namespace reshard::coordinator {

// Rank `rank` of `job` (world size `world`) joining as incarnation
// 100 + rank unless given.
inline JoinInfo Joining(const std::string& job, int64_t rank, int64_t world,
                        uint64_t incarnation = 0) {
  JoinInfo info;
  info.agent = AgentId{job, rank, incarnation == 0 ? 100 + rank : incarnation};
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
