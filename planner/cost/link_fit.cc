#include "planner/cost/link_fit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "planner/core/mesh.h"
#include "planner/cost/collective_factors.h"
#include "planner/cost/cost_model.h"

namespace reshard {
namespace {

// Relative errors up to this are weighted fully; larger ones by
// kHuberRelative / |error| (Huber's weights).
constexpr double kHuberRelative = 0.1;
constexpr int kRefits = 30;
// A bandwidth is fitted only when the samples of the largest size take at
// least this much longer (medians) than those of the smallest.
constexpr double kMinGrowth = 1.1;

// The fit's unknowns: c1 = the latency per round (µs), c2 = µs per bus
// byte.
struct Coefficients {
  double c1 = 0;
  double c2 = 0;
};

// One sample as the linear problem sees it: y = c1 * rounds + c2 *
// bus_bytes.
struct Row {
  double rounds = 0;
  double bus_bytes = 0;
  double y = 0;     // the time beyond the base latency (`base_us`)
  double time = 0;  // the measured time
};

absl::StatusOr<std::vector<Row>> RowsOf(absl::Span<const LinkSample> samples,
                                        double base_us) {
  std::vector<Row> rows;
  for (size_t i = 0; i < samples.size(); ++i) {
    const LinkSample& s = samples[i];
    if (!IsCollective(s.op) || s.members < 2 || s.bytes < 0 ||
        !(s.time_us > 0) || !std::isfinite(s.time_us)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "samples[", i, "]: not a timed collective on >= 2 members"));
    }
    rows.push_back(
        {static_cast<double>(LatencyRounds(s.op, s.members)),
         BusBandwidthFactor(s.op, s.members) * static_cast<double>(s.bytes),
         s.time_us - base_us, s.time_us});
  }
  return rows;
}

// Weighted least squares of y on (rounds, bus_bytes) without an intercept;
// the latency is held at 0 when the free fit makes it negative.
Coefficients Solve(const std::vector<Row>& rows,
                   const std::vector<double>& weights) {
  double aa = 0, ab = 0, bb = 0, ay = 0, by = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const double w = weights[i];
    aa += w * r.rounds * r.rounds;
    ab += w * r.rounds * r.bus_bytes;
    bb += w * r.bus_bytes * r.bus_bytes;
    ay += w * r.rounds * r.y;
    by += w * r.bus_bytes * r.y;
  }
  const double det = aa * bb - ab * ab;
  if (det > 1e-12 * aa * bb) {
    const Coefficients free{(ay * bb - ab * by) / det,
                            (aa * by - ab * ay) / det};
    if (free.c1 >= 0) return free;
  }
  return {0, bb > 0 ? by / bb : 0};
}

// Weights for the next refit: relative least squares (1 / time^2) times
// Huber's weight of each row's relative error.
std::vector<double> WeightsOf(const std::vector<Row>& rows,
                              const Coefficients* fit, double base_us) {
  std::vector<double> weights;
  for (const Row& r : rows) {
    double w = 1 / (r.time * r.time);
    if (fit != nullptr) {
      const double predicted =
          base_us + fit->c1 * r.rounds + fit->c2 * r.bus_bytes;
      const double error = std::abs(predicted - r.time) / r.time;
      if (error > kHuberRelative) w *= kHuberRelative / error;
    }
    weights.push_back(w);
  }
  return weights;
}

// The median time at `bytes`.
double MedianTimeAt(absl::Span<const LinkSample> samples, int64_t bytes) {
  std::vector<double> times;
  for (const LinkSample& s : samples) {
    if (s.bytes == bytes) times.push_back(s.time_us);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// True when the largest size's samples take clearly longer than the
// smallest's: there is a bandwidth to fit.
bool GrowWithBytes(absl::Span<const LinkSample> samples) {
  if (samples.empty()) return false;
  int64_t least = samples[0].bytes;
  int64_t most = least;
  for (const LinkSample& s : samples) {
    least = std::min(least, s.bytes);
    most = std::max(most, s.bytes);
  }
  return most > least && MedianTimeAt(samples, most) >=
                             kMinGrowth * MedianTimeAt(samples, least);
}

}  // namespace

double PredictUs(const LinkSample& sample, double latency_us,
                 double bandwidth_gbps, double base_us) {
  return AlphaBetaCollectiveUs(sample.op, sample.members, sample.bytes, base_us,
                               latency_us, bandwidth_gbps);
}

std::vector<double> RelativeErrors(absl::Span<const LinkSample> samples,
                                   double latency_us, double bandwidth_gbps,
                                   double base_us) {
  std::vector<double> errors;
  for (const LinkSample& s : samples) {
    errors.push_back(
        (PredictUs(s, latency_us, bandwidth_gbps, base_us) - s.time_us) /
        s.time_us);
  }
  return errors;
}

double MedianAbs(absl::Span<const double> values) {
  std::vector<double> abs;
  for (double v : values) abs.push_back(std::abs(v));
  return Median(std::move(abs));
}

absl::StatusOr<LinkFit> FitLink(absl::Span<const LinkSample> samples,
                                double base_us) {
  absl::StatusOr<std::vector<Row>> rows = RowsOf(samples, base_us);
  if (!rows.ok()) return rows.status();
  Coefficients fit = Solve(*rows, WeightsOf(*rows, nullptr, base_us));
  for (int i = 0; i < kRefits; ++i) {
    fit = Solve(*rows, WeightsOf(*rows, &fit, base_us));
  }
  if (!(fit.c2 > 0) || !GrowWithBytes(samples)) {
    return absl::FailedPreconditionError(
        "the times do not grow with the bytes: no bandwidth to fit (measure "
        "larger sizes, or more iterations)");
  }
  LinkFit out;
  out.latency_us = std::min(fit.c1, kMaxLinkLatencyUs);
  out.bandwidth_gbps =
      std::clamp(1e-3 / fit.c2, kMinLinkBandwidthGBps, kMaxLinkBandwidthGBps);
  out.relative_errors =
      RelativeErrors(samples, out.latency_us, out.bandwidth_gbps, base_us);
  out.median_abs_error = MedianAbs(out.relative_errors);
  return out;
}

}  // namespace reshard
