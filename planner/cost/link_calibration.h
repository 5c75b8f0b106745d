// From timed single-step runs (calibration_plans.h) to a mesh with measured
// links (docs/notes/2026-11-27-plan-quality.md, "Measured plan quality"): every
// calibrated group's link is fitted to its rings (link_fit.h); a dim's group
// gives the dim its link; a flattened group gets its own link where what its
// dims' links predict for its rings misses its measurements by more than
// kOwnLinkError. An all_to_all's bytes are priced by its dims' links and
// the copy rate (cost_model.h); its latency is fitted per group to its
// all_to_alls (LinkParams::all_to_all_us), since it grows with the group's
// size where ranks wait to be scheduled, unlike one ring hop's. The copy
// rate comes from the strided gathers' time beyond the contiguous gathers
// of the same group and size, per byte (a median); the reduction rate
// from the reduce_scatters' time beyond those gathers, per reduced byte
// (a median), taken off reduce_scatters and all_reduces before links are
// fitted to them. Every collective's base
// latency (Mesh::base_us) is common to all groups: it is the one of a
// geometric series that, with each group's link fitted under it, predicts
// every sample best. The fit is judged on sizes it did not see: fits on
// every other size predict the rest, per op.
#ifndef RESHARD_PLANNER_COST_LINK_CALIBRATION_H_
#define RESHARD_PLANNER_COST_LINK_CALIBRATION_H_

#include <array>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/core/mesh.h"
#include "planner/cost/calibration_plans.h"
#include "planner/cost/link_fit.h"

namespace reshard {

// A flattened group whose dims' links predict its times with a median
// error above this gets a link of its own.
inline constexpr double kOwnLinkError = 0.10;

// The base latencies calibration tries: kBaseLatencyUs times powers of
// this (2^(1/4)), up to the fastest ring measured.
inline constexpr double kBaseLatencyStep = 1.1892;

// The copy rate is fitted to the strided gathers that unpack at least this
// many bytes, the reduction rate to the reduce_scatters of buffers at least
// this large: below it, copying or reducing takes less time than runs vary
// by.
inline constexpr int64_t kLocalRateFitMinBytes = int64_t{1} << 20;

// One timed collective of a calibration: on `group`, at the `size_index`th
// size of the sweep.
struct CalibrationSample {
  Group group;
  int size_index = 0;
  LinkSample sample;
};

// Per op, in kCalibratedOps' order.
using PerOp = std::array<double, std::size(kCalibratedOps)>;

struct GroupCalibration {
  Group group;
  int64_t members = 0;
  // The group's link, fitted on every size of its ring collectives
  // (contiguous all_gather, reduce_scatter, all_reduce).
  LinkFit fit;
  // Per sample of the group, in the order given: what the fitted links
  // and copy rate predict (an all_to_all from its dims' links), the
  // relative error, and the median |relative error|.
  std::vector<double> predicted_us;
  std::vector<double> relative_errors;
  double median_abs_error = 0;
  // By op, in kCalibratedOps' order: the median |relative error| on the
  // odd-indexed sizes of fits on the even-indexed ones (strided gathers
  // aside); -1 where the op has no such sizes or a fit it needs failed.
  PerOp held_out_error{};
  // The relative errors behind held_out_error, by op.
  std::array<std::vector<double>, std::size(kCalibratedOps)> held_out_errors;
  // The all_to_all latency fitted to the group's all_to_alls, given to it
  // in the calibrated mesh; nullopt without all_to_all samples.
  std::optional<double> all_to_all_us;
  // A flattened group's: the median |relative error| of its dims' fitted
  // links (the cost model's slowest-link rule) on its ring samples; 0 for
  // dims.
  double dims_error = 0;
  bool own_link = false;  // the calibrated mesh gives it its fitted link
};

struct Calibration {
  std::vector<GroupCalibration> groups;  // in CalibrationGroups' order
  // By op: the median |relative error| over every group's held-out sizes
  // together (-1 where none): how well calibrated links predict an op.
  PerOp held_out_error{};
  // The strided gathers (all_gathers with packed_bytes): the median
  // |relative error| of their predictions with the fitted copy rate, with
  // none (packing unpriced, as on a mesh without a copy rate), and with fits
  // on the even sizes on the odd ones; -1 without such samples.
  double copy_error = -1;
  double copy_error_unpriced = -1;
  double copy_held_out_error = -1;
  // The input mesh with the calibrated links, the base latency where it is
  // not kBaseLatencyUs (Mesh::base_us), given strided gathers the fitted
  // copy rate (Mesh::copy_gbps) and, where reduce_scatters take longer than
  // all_gathers of the same bytes, the fitted reduction rate
  // (Mesh::reduce_gbps).
  Mesh mesh;
};

// Fits every group of CalibrationGroups(mesh) to its samples. Samples on
// other groups are INVALID_ARGUMENT; a group without samples, or whose fit
// fails, fails the calibration naming the group.
absl::StatusOr<Calibration> Calibrate(
    const Mesh& mesh, absl::Span<const CalibrationSample> samples);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_LINK_CALIBRATION_H_
