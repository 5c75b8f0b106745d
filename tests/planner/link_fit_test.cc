// FitLink recovers the link that generated synthetic timings exactly, keeps
// its estimate under a few spoiled timings, and refuses what it cannot fit
// with a message naming why.
#include "planner/cost/link_fit.h"

#include <vector>

#include "gtest/gtest.h"

namespace reshard {
namespace {

constexpr double kLatencyUs = 37.5;
constexpr double kBandwidthGBps = 0.096;

// Every op on groups of 2, 4 and 8 members, 4 KiB to 64 MiB, timed exactly
// as the model says for the link above.
std::vector<LinkSample> Synthetic() {
  std::vector<LinkSample> samples;
  for (StepOp op : {StepOp::kAllGather, StepOp::kReduceScatter,
                    StepOp::kAllReduce, StepOp::kAllToAll}) {
    for (int64_t members : {2, 4, 8}) {
      for (int64_t bytes = 4096; bytes <= (64 << 20); bytes *= 16) {
        LinkSample s{op, members, bytes, 0};
        s.time_us = PredictUs(s, kLatencyUs, kBandwidthGBps);
        samples.push_back(s);
      }
    }
  }
  return samples;
}

TEST(LinkFitTest, RecoversTheLinkOfExactTimings) {
  const std::vector<LinkSample> samples = Synthetic();
  absl::StatusOr<LinkFit> fit = FitLink(samples);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->latency_us, kLatencyUs, kLatencyUs * 1e-9);
  EXPECT_NEAR(fit->bandwidth_gbps, kBandwidthGBps, kBandwidthGBps * 1e-9);
  ASSERT_EQ(fit->relative_errors.size(), samples.size());
  for (double e : fit->relative_errors) EXPECT_NEAR(e, 0, 1e-9);
  EXPECT_NEAR(fit->median_abs_error, 0, 1e-9);
}

TEST(LinkFitTest, ZeroLatencyIsNotFittedNegative) {
  std::vector<LinkSample> samples = Synthetic();
  for (LinkSample& s : samples) s.time_us = PredictUs(s, 0, kBandwidthGBps);
  absl::StatusOr<LinkFit> fit = FitLink(samples);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_GE(fit->latency_us, 0);
  EXPECT_NEAR(fit->latency_us, 0, 1e-6);
  EXPECT_NEAR(fit->bandwidth_gbps, kBandwidthGBps, kBandwidthGBps * 1e-9);
}

TEST(LinkFitTest, AFewSpoiledTimingsMoveTheFitLittle) {
  std::vector<LinkSample> samples = Synthetic();
  // Three timings, one of them at the largest size, taken while something
  // else ran: three and four times as long.
  samples[1].time_us *= 3;
  samples[10].time_us *= 4;
  samples[samples.size() - 1].time_us *= 3;
  absl::StatusOr<LinkFit> fit = FitLink(samples);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->bandwidth_gbps, kBandwidthGBps, kBandwidthGBps * 0.02);
  EXPECT_NEAR(fit->latency_us, kLatencyUs, kLatencyUs * 0.05);
  // The spoiled ones stand out in the residuals; the rest fit.
  EXPECT_LT(fit->relative_errors[10], -0.7);
  EXPECT_LT(fit->median_abs_error, 0.02);
}

TEST(LinkFitTest, RefusesSamplesThatAreNotTimedCollectives) {
  std::vector<LinkSample> samples = Synthetic();
  samples[1].members = 1;
  absl::StatusOr<LinkFit> fit = FitLink(samples);
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fit.status().message(),
            "samples[1]: not a timed collective on >= 2 members");
  samples = Synthetic();
  samples[2].time_us = 0;
  EXPECT_EQ(FitLink(samples).status().message(),
            "samples[2]: not a timed collective on >= 2 members");
}

TEST(LinkFitTest, TimesThatDoNotGrowWithSizeHaveNoBandwidth) {
  std::vector<LinkSample> samples = Synthetic();
  for (LinkSample& s : samples) s.time_us = 1000;
  absl::StatusOr<LinkFit> fit = FitLink(samples);
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(fit.status().message().find("do not grow with the bytes"),
            std::string::npos);
  EXPECT_EQ(FitLink({}).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LinkFitTest, MedianAbsOfOddAndEvenCounts) {
  EXPECT_EQ(MedianAbs({}), 0);
  EXPECT_EQ(MedianAbs({-3, 1, 2}), 2);
  EXPECT_EQ(MedianAbs({-4, 1, 2, -3}), 2.5);
}

}  // namespace
}  // namespace reshard
