// Reading back a calibration's samples from what `reshardctl job calibrate
// --json` printed, so that a saved sweep can be fitted again (after a model
// change, or with another mesh's flattened groups) without running it.
#ifndef RESHARD_CLIENT_CALIBRATION_SAMPLES_FILE_H_
#define RESHARD_CLIENT_CALIBRATION_SAMPLES_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/core/mesh.h"
#include "planner/cost/link_calibration.h"

namespace reshard::client {

struct SavedSweep {
  std::vector<int64_t> sizes;
  std::vector<CalibrationSample> samples;  // in the order they ran
};

// The sizes and samples of a calibration's JSON text, on `mesh`'s groups
// (matched by name): a sample's size index is its place among its group's
// samples of its op, the order the sweep ran them in. INVALID_ARGUMENT
// names the field that is missing, of the wrong kind, or names a group or
// op this mesh does not calibrate.
absl::StatusOr<SavedSweep> ParseCalibrationJson(absl::string_view text,
                                                const Mesh& mesh);

// The same from a file; errors start with "--samples_from PATH".
absl::StatusOr<SavedSweep> ReadCalibrationJson(const std::string& path,
                                               const Mesh& mesh);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_CALIBRATION_SAMPLES_FILE_H_
