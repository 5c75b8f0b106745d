// The one median every report and fit uses: the middle value, or the mean
// of the middle two for an even count; 0 when empty. Timed runs, link fits
// and benchmarks all mean this by "median". And the weighted median a fit
// uses to minimize a sum of absolute relative errors.
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

// The weighted median of `values` (weights > 0, as many): the smallest
// value at which the weight of the values at or below it reaches half the
// total, a minimizer of Σ w_i·|v_i − x|; 0 when empty.
inline double WeightedMedian(const std::vector<double>& values,
                             const std::vector<double>& weights) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&values](size_t a, size_t b) { return values[a] < values[b]; });
  double total = 0;
  for (double w : weights) total += w;
  double below = 0;
  for (size_t i : order) {
    below += weights[i];
    if (2 * below >= total) return values[i];
  }
  return 0;
}

}  // namespace reshard

#endif  // RESHARD_COMMON_MEDIAN_H_
