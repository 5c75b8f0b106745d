// Prepared schedules in the Coordinator's core (docs/DESIGN.md §9, "A
// static schedule"): kept per job and generation, refused with "prepare
// again" once deleted or once an agent rejoined, bounded per job, and their
// ids checked before they are echoed.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/schedule_bounds.h"
#include "coordinator/coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_cases.h"
#include "tests/coordinator/stand_in_agents.h"

namespace reshard::coordinator {
namespace {

using ::testing::HasSubstr;

// A cross-mesh run of ranks 0-1 to ranks 2-3 (its plan is not looked at
// until it runs).
std::shared_ptr<const RunSpec> CrossSpec() {
  RunSpec spec{testing::MakeMesh({4}), {}, 10, 0, 30};
  spec.cross =
      executor::CrossWork{*Mesh::Create({{2}, {"a"}, {0, 1}}),
                          *Mesh::Create({{2}, {"b"}, {2, 3}}), CrossMeshPlan()};
  return std::make_shared<const RunSpec>(std::move(spec));
}

TEST_F(CoordinatorTest, AScheduleHoldsUntilDeletedOrAnAgentRejoins) {
  for (int64_t r = 0; r < 4; ++r) ASSERT_TRUE(c_.Join(Joining("j", r, 4)).ok());
  absl::StatusOr<PreparedSchedule> kept = c_.PrepareSchedule("j", CrossSpec());
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->schedules, 1u);
  absl::StatusOr<std::shared_ptr<const RunSpec>> spec =
      c_.Scheduled("j", kept->id);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE((*spec)->cross.has_value());

  ASSERT_TRUE(c_.DeleteSchedule("j", kept->id).ok());
  absl::Status gone = c_.Scheduled("j", kept->id).status();
  EXPECT_EQ(gone.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(gone.message(), HasSubstr("\"" + kept->id + "\""));
  EXPECT_THAT(gone.message(), HasSubstr("prepare again"));
  absl::Status twice = c_.DeleteSchedule("j", kept->id);
  EXPECT_EQ(twice.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(twice.message(), HasSubstr("schedule_id: "));

  kept = c_.PrepareSchedule("j", CrossSpec());
  ASSERT_TRUE(kept.ok()) << kept.status();
  // Rank 2 comes back as another process: the generation moves on.
  ASSERT_TRUE(c_.Join(Joining("j", 2, 4, 900)).ok());
  absl::Status stale = c_.Scheduled("j", kept->id).status();
  EXPECT_EQ(stale.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stale.message(), HasSubstr(absl::StrCat("prepared in generation ",
                                                      kept->generation)));
  EXPECT_THAT(stale.message(), HasSubstr("prepare again"));
}

// A batch of `tensors` cross-mesh works, as CrossSpec's.
std::shared_ptr<const RunSpec> CrossBatchSpec(int tensors) {
  RunSpec spec = *CrossSpec();
  spec.cross_batch.assign(tensors, *spec.cross);
  spec.cross.reset();
  return std::make_shared<const RunSpec>(std::move(spec));
}

// The ids and tensor counts GetJob lists.
std::vector<std::pair<std::string, int64_t>> Listed(const Coordinator& c) {
  std::vector<std::pair<std::string, int64_t>> out;
  absl::StatusOr<JobSnapshot> job = c.GetJob("j");
  if (!job.ok()) return out;
  for (const JobSnapshot::PreparedSchedule& s : job->schedules) {
    EXPECT_FALSE(s.delivered) << s.id;  // no run of it succeeded yet
    out.emplace_back(s.id, s.tensors);
  }
  return out;
}

TEST_F(CoordinatorTest, AJobListsItsSchedulesOfThisGeneration) {
  for (int64_t r = 0; r < 4; ++r) ASSERT_TRUE(c_.Join(Joining("j", r, 4)).ok());
  EXPECT_TRUE(Listed(c_).empty());
  absl::StatusOr<PreparedSchedule> one = c_.PrepareSchedule("j", CrossSpec());
  absl::StatusOr<PreparedSchedule> batch =
      c_.PrepareSchedule("j", CrossBatchSpec(3));
  ASSERT_TRUE(one.ok() && batch.ok());
  std::vector<std::pair<std::string, int64_t>> want = {{one->id, 1},
                                                       {batch->id, 3}};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Listed(c_), want);

  ASSERT_TRUE(c_.DeleteSchedule("j", one->id).ok());
  EXPECT_EQ(Listed(c_),
            (std::vector<std::pair<std::string, int64_t>>{{batch->id, 3}}));
  // Rank 2 comes back as another process: no schedule holds any more.
  ASSERT_TRUE(c_.Join(Joining("j", 2, 4, 900)).ok());
  EXPECT_TRUE(Listed(c_).empty());
}

TEST_F(CoordinatorTest, AJobKeepsABoundedNumberOfSchedules) {
  for (int64_t r = 0; r < 4; ++r) ASSERT_TRUE(c_.Join(Joining("j", r, 4)).ok());
  std::string first;
  for (size_t i = 0; i < kMaxSchedulesPerJob; ++i) {
    absl::StatusOr<PreparedSchedule> kept =
        c_.PrepareSchedule("j", CrossSpec());
    ASSERT_TRUE(kept.ok()) << kept.status();
    if (i == 0) first = kept->id;
  }
  absl::Status full = c_.PrepareSchedule("j", CrossSpec()).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("delete one"));
  ASSERT_TRUE(c_.DeleteSchedule("j", first).ok());
  EXPECT_TRUE(c_.PrepareSchedule("j", CrossSpec()).ok());
  for (const std::string& bad :
       {std::string(), std::string(65, 'x'), std::string("a\nb")}) {
    absl::Status s = c_.Scheduled("j", bad).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("schedule_id: "));
  }
}

TEST_F(CoordinatorTest, AScheduleMustCoverTheJobsRanks) {
  for (int64_t r = 0; r < 6; ++r) ASSERT_TRUE(c_.Join(Joining("k", r, 6)).ok());
  absl::Status s = c_.PrepareSchedule("k", CrossSpec()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("cross: the two meshes' rank maps"));
  EXPECT_EQ(c_.PrepareSchedule("nope", CrossSpec()).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace reshard::coordinator
