// The one median every report and fit uses: the middle value, or the mean
// of the middle two for an even count; 0 when empty. Timed runs, link fits
// and benchmarks all mean this by "median".
#ifndef RESHARD_COMMON_MEDIAN_H_
#define RESHARD_COMMON_MEDIAN_H_

#include <algorithm>
#include <vector>

namespace reshard {

inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  return (upper + *std::max_element(values.begin(), values.begin() + mid)) / 2;
}

}  // namespace reshard

#endif  // RESHARD_COMMON_MEDIAN_H_
