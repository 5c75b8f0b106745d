// The statistics timed runs report (docs/DESIGN.md §6.3): the minimum and the
// median of a step's (or a bucket's, or a whole batch's) seconds over the
// timed runs. One home, so every report means the same by "median".
#ifndef RESHARD_RUN_VALUES_SAMPLE_STATS_H_
#define RESHARD_RUN_VALUES_SAMPLE_STATS_H_

#include <algorithm>
#include <vector>

#include "common/median.h"

namespace reshard::executor {

// The median: common/median.h's.
using ::reshard::Median;

// The minimum; 0 when empty.
inline double Minimum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

}  // namespace reshard::executor

#endif  // RESHARD_RUN_VALUES_SAMPLE_STATS_H_
