// A status carries the ranks of a failed run beside its message, and
// keeps them when it is reworded.
#include "common/run_failure.h"

#include "common/reworded_status.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(RunFailureTest, RanksRideAlongTheStatus) {
  const std::vector<RankFailure> ranks = {
      {0, "10.0.0.1", "timeout", "steps[0] \"all_gather\"\ntimed out"},
      {7, "", "lost", "its agent left"}};
  const absl::Status failed =
      WithRankFailures(absl::UnavailableError("run failed"), ranks);
  EXPECT_EQ(failed.message(), "run failed");
  EXPECT_EQ(RankFailuresOf(failed), ranks);
  EXPECT_EQ(RankFailuresOf(Reworded(failed, "other words")), ranks);
  EXPECT_EQ(Reworded(failed, "other words").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(RankFailuresOf(absl::UnavailableError("run failed")).empty());
  EXPECT_TRUE(WithRankFailures(absl::OkStatus(), ranks).ok());
  EXPECT_EQ(
      RankFailureJson(ranks[1]),
      R"({"rank": 7, "host": "", "kind": "lost", "message": "its agent left"})");
}

}  // namespace
}  // namespace reshard
