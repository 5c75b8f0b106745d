// How `reshardctl job calibrate` prints a calibration: a table per group
// (its fitted link, the fit's error, the error per op on held-out sizes,
// the error of its dims' links for a flattened group), the --link flags to
// use, or all of it as JSON with every sample.
#ifndef RESHARD_CLIENT_CALIBRATION_OUTPUT_H_
#define RESHARD_CLIENT_CALIBRATION_OUTPUT_H_

#include <ostream>
#include <string>
#include <vector>

#include "planner/cost/link_calibration.h"

namespace reshard::client {

struct CalibrationReport {
  std::string job;
  std::vector<int64_t> sizes;
  std::vector<CalibrationSample> samples;  // in the order they ran
  const Calibration* calibration = nullptr;
};

// A group whose held-out error on some op is above this fits poorly: its
// links would mislead the planner, and the output says so.
inline constexpr double kPoorFitError = 0.25;

// What the output prints to paste as --link, --copy_gbps, ... flags: the
// calibrated mesh with every measured value to 4 significant digits (the
// fits are not more precise than that).
Mesh ForPasting(const Mesh& mesh);

// One line per group with a held-out error above `bound` (a fraction),
// naming the group, each such op and its error; empty when none.
std::vector<std::string> PoorFits(const Calibration& calibration, double bound);

void PrintCalibrationText(const CalibrationReport& report, std::ostream& out);
void PrintCalibrationJson(const CalibrationReport& report, std::ostream& out);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CALIBRATION_OUTPUT_H_
