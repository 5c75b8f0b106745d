// The one median and the weighted median the fits use: what each returns
// for odd and even counts, ties and skewed weights.
#include "common/median.h"

#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(MedianTest, MiddleOrMeanOfTheMiddleTwo) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

TEST(MedianTest, WeightedMedianMinimizesTheWeightedAbsoluteDeviation) {
  EXPECT_EQ(WeightedMedian({}, {}), 0);
  EXPECT_EQ(WeightedMedian({5}, {0.1}), 5);
  // Equal weights: the lower middle value.
  EXPECT_EQ(WeightedMedian({3, 1, 2}, {1, 1, 1}), 2);
  EXPECT_EQ(WeightedMedian({4, 1, 3, 2}, {1, 1, 1, 1}), 2);
  // A value with more than half the weight is the answer wherever it lies.
  EXPECT_EQ(WeightedMedian({100, 1, 2, 3}, {10, 1, 1, 1}), 100);
  EXPECT_EQ(WeightedMedian({100, 1, 2, 3}, {1, 0.5, 0.5, 10}), 3);
}

}  // namespace
}  // namespace reshard
