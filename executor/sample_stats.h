// The statistics timed runs report (docs/DESIGN.md §6.3): the minimum and the
// median of a step's (or a bucket's, or a whole batch's) seconds over the
// timed runs. One home, so every report means the same by "median".
#ifndef RESHARD_EXECUTOR_SAMPLE_STATS_H_
#define RESHARD_EXECUTOR_SAMPLE_STATS_H_

#include <algorithm>
#include <vector>

namespace reshard::executor {

// The median (the mean of the middle two for an even count); 0 when empty.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// The minimum; 0 when empty.
inline double Minimum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_SAMPLE_STATS_H_
