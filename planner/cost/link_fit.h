// Fitting a group's link to measured collectives (docs/DESIGN.md §3.3):
// the α-β model prices a collective on n members as a base latency,
// latency rounds (a ring's hops, one for all_to_all) and the bus bytes over
// the link's bandwidth (AlphaBetaCollectiveUs). Given step times measured on
// one group, FitLink finds the latency per round and the bandwidth that
// explain them best, in relative error (sizes span four orders of
// magnitude, so absolute errors would let the largest sizes decide alone),
// and robustly: a Huber-weighted least squares refit discounts the few
// timings a busy machine spoils.
#ifndef RESHARD_PLANNER_COST_LINK_FIT_H_
#define RESHARD_PLANNER_COST_LINK_FIT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/median.h"
#include "planner/core/step.h"
#include "planner/cost/cost_model.h"

namespace reshard {

// One measured collective: `op` on a group of `members` moving `bytes`
// (counted as StepCost::bytes counts them), taking `time_us`.
struct LinkSample {
  StepOp op = StepOp::kAllGather;
  int64_t members = 2;
  int64_t bytes = 0;
  double time_us = 0;
  // Bytes the step also packed or unpacked locally (packing_bytes.h): a
  // strided gather's output, an all_to_all's input. Calibration fits the
  // copy rate to the strided gathers (link_calibration.h).
  int64_t packed_bytes = 0;
};

struct LinkFit {
  double latency_us = 0;      // per round, >= 0
  double bandwidth_gbps = 0;  // GB/s, GB = 1e9 bytes
  // Per sample, in the order given: (predicted - measured) / measured.
  std::vector<double> relative_errors;
  double median_abs_error = 0;  // of relative_errors
};

// The model's time for `sample` over a link of `latency_us` per round and
// `bandwidth_gbps`, every collective costing `base_us` more.
double PredictUs(const LinkSample& sample, double latency_us,
                 double bandwidth_gbps, double base_us = kBaseLatencyUs);

// Fits one link to `samples` (collectives on groups of >= 2 members, times
// > 0), each collective costing `base_us` besides the link.
// INVALID_ARGUMENT names a bad sample; FAILED_PRECONDITION when the times
// do not grow with the bytes (no bandwidth to fit: too few sizes, or noise
// larger than the transfer). The bandwidth is clamped to the mesh's
// accepted range (mesh.h).
absl::StatusOr<LinkFit> FitLink(absl::Span<const LinkSample> samples,
                                double base_us = kBaseLatencyUs);

// (predicted - measured) / measured of every sample under a given link.
std::vector<double> RelativeErrors(absl::Span<const LinkSample> samples,
                                   double latency_us, double bandwidth_gbps,
                                   double base_us = kBaseLatencyUs);

// The median of |x| over `values` (0 when empty).
double MedianAbs(absl::Span<const double> values);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_LINK_FIT_H_
