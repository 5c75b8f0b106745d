#include "planner/cost/link_calibration.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "planner/core/tensor_spec.h"
#include "planner/cost/collective_factors.h"
#include "planner/cost/cost_model.h"

namespace reshard {
namespace {

// One sample of a group and its size index.
struct GroupSample {
  LinkSample sample;
  int size_index = 0;
  bool even() const { return size_index % 2 == 0; }
};
using ByGroup = std::vector<std::vector<GroupSample>>;
// Every group's fit, in CalibrationGroups' order; nullopt where it failed.
using Fits = std::vector<std::optional<LinkFit>>;

// Which sizes a fit or check reads.
enum class Sizes { kAll, kEven, kOdd };

// What a calibration fits for the whole mesh besides its links (unset:
// the cost model's default).
struct MeshRates {
  std::optional<double> copy_gbps;
  std::optional<double> reduce_gbps;
  std::optional<double> base_us;
  double base() const { return base_us.value_or(kBaseLatencyUs); }
};

bool OfSizes(const GroupSample& s, Sizes sizes) {
  return sizes == Sizes::kAll || s.even() == (sizes == Sizes::kEven);
}

absl::StatusOr<ByGroup> SplitByGroup(
    const Mesh& mesh, const std::vector<Group>& groups,
    absl::Span<const CalibrationSample> samples) {
  ByGroup by_group(groups.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const CalibrationSample& s = samples[i];
    const auto it =
        std::find(groups.begin(), groups.end(), mesh.WithoutUnitDims(s.group));
    if (it == groups.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("samples[", i, "]: group ", mesh.GroupName(s.group),
                       " is not calibrated on this mesh"));
    }
    by_group[it - groups.begin()].push_back({s.sample, s.size_index});
  }
  return by_group;
}

// A strided gather (StridedGatherPlan): its packing times the copy rate.
bool IsStridedGather(const LinkSample& s) {
  return s.op == StepOp::kAllGather && s.packed_bytes > 0;
}

// Whether a group's link is fitted to `s`: its rings. An all_to_all's
// bytes are priced by its dims' links and the copy rate (cost_model.h), its
// latency fitted on its own (FitAllToAllLatencies).
bool FitsLink(const LinkSample& s) {
  return s.op != StepOp::kAllToAll && !IsStridedGather(s);
}

// What is left of a measured time for the link once a reduction the mesh
// prices is taken off: at least this share of it (a single run may take
// less than the median rate says it reduces in).
constexpr double kMinLinkShare = 0.1;

// The samples of `sizes` a group's link is fitted to, without the time
// their reductions take at `reduce_gbps` (where set).
std::vector<LinkSample> FitSamples(const std::vector<GroupSample>& samples,
                                   Sizes sizes,
                                   std::optional<double> reduce_gbps) {
  std::vector<LinkSample> fitted;
  for (const GroupSample& s : samples) {
    if (!OfSizes(s, sizes) || !FitsLink(s.sample)) continue;
    LinkSample link = s.sample;
    if (reduce_gbps.has_value()) {
      const double reducing =
          ReductionUs(link.op, link.members, link.bytes, *reduce_gbps);
      link.time_us =
          std::max(link.time_us - reducing, kMinLinkShare * link.time_us);
    }
    fitted.push_back(link);
  }
  return fitted;
}

// Every group's link fitted to its rings of `sizes` under `rates`.
Fits FitAll(const ByGroup& by_group, Sizes sizes, const MeshRates& rates) {
  Fits fits;
  for (const std::vector<GroupSample>& samples : by_group) {
    absl::StatusOr<LinkFit> fit =
        FitLink(FitSamples(samples, sizes, rates.reduce_gbps), rates.base());
    fits.push_back(fit.ok() ? std::optional<LinkFit>(*std::move(fit))
                            : std::nullopt);
  }
  return fits;
}

LinkParams LinkOf(const LinkFit& fit) {
  return {fit.bandwidth_gbps, fit.latency_us};
}

// `mesh` with each dim's link from its group's fit and, where `own[i]`,
// the flattened groups[i]'s own link from its fit; other flattened groups
// have none. Links of groups without a fit stay `mesh`'s. The rates and
// base latency are `rates`'.
absl::StatusOr<Mesh> MeshWithFits(const Mesh& mesh,
                                  const std::vector<Group>& groups,
                                  const Fits& fits,
                                  const std::vector<bool>& own,
                                  const MeshRates& rates) {
  MeshSpec spec = mesh.ToSpec();
  spec.copy_gbps = rates.copy_gbps;
  spec.reduce_gbps = rates.reduce_gbps;
  spec.base_us = rates.base_us;
  spec.flattened_links.assign(mesh.flattened().size(), LinkParams{});
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!fits[i].has_value()) continue;
    if (groups[i].size() == 1) {
      spec.links[groups[i][0]] = LinkOf(*fits[i]);
      continue;
    }
    if (!own[i]) continue;
    for (size_t f = 0; f < mesh.flattened().size(); ++f) {
      if (mesh.WithoutUnitDims(mesh.flattened()[f]) == groups[i]) {
        spec.flattened_links[f] = LinkOf(*fits[i]);
      }
    }
  }
  return Mesh::Create(spec);
}

// What `model` predicts for `s`: its collective and its packing.
double PredictedUs(const CostModel& model, const Group& group,
                   const LinkSample& s) {
  return model.CollectiveTime(s.op, group, s.bytes) +
         static_cast<double>(s.packed_bytes) * model.PackingUsPerByte();
}

// (predicted - measured) / measured of `s` under `model`.
double RelativeError(const CostModel& model, const Group& group,
                     const LinkSample& s) {
  return (PredictedUs(model, group, s) - s.time_us) / s.time_us;
}

// A default-model CostModel over `mesh`: CollectiveTime needs no tensor.
CostModel ModelOf(const Mesh& mesh) {
  static const TensorSpec* const unused =
      new TensorSpec(*TensorSpec::Create({1}, DType::kFloat32));
  return CostModel(mesh, *unused, CostOptions{});
}

// Every group's fit on all its sizes under `rates`; a failed fit fails
// naming the group.
absl::StatusOr<std::vector<GroupCalibration>> FitGroups(
    const Mesh& mesh, const std::vector<Group>& groups, const ByGroup& by_group,
    const MeshRates& rates) {
  std::vector<GroupCalibration> out;
  for (size_t i = 0; i < groups.size(); ++i) {
    absl::StatusOr<LinkFit> fit = FitLink(
        FitSamples(by_group[i], Sizes::kAll, rates.reduce_gbps), rates.base());
    if (!fit.ok()) {
      return absl::Status(fit.status().code(),
                          absl::StrCat("group ", mesh.GroupName(groups[i]),
                                       ": ", fit.status().message()));
    }
    GroupCalibration& g = out.emplace_back();
    g.group = groups[i];
    g.members = mesh.GroupSize(groups[i]);
    g.fit = *std::move(fit);
  }
  return out;
}

// Every sample's prediction under the fitted links (`fit_mesh`).
void Predict(const Mesh& fit_mesh, const ByGroup& by_group,
             std::vector<GroupCalibration>& out) {
  const CostModel model = ModelOf(fit_mesh);
  for (size_t i = 0; i < out.size(); ++i) {
    GroupCalibration& g = out[i];
    for (const GroupSample& s : by_group[i]) {
      g.predicted_us.push_back(PredictedUs(model, g.group, s.sample));
      g.relative_errors.push_back(RelativeError(model, g.group, s.sample));
    }
    g.median_abs_error = MedianAbs(g.relative_errors);
  }
}

bool IsStrided(const GroupSample& s, Sizes sizes) {
  return IsStridedGather(s.sample) && OfSizes(s, sizes);
}

// µs per byte as GB/s: a median of 0 or less gives `fallback`, others are
// clamped to the accepted range.
std::optional<double> RateOf(double median_us_per_byte,
                             std::optional<double> fallback) {
  if (median_us_per_byte <= 0) return fallback;
  return std::clamp(1e-3 / median_us_per_byte, kMinLinkBandwidthGBps,
                    kMaxLinkBandwidthGBps);
}

// The contiguous all_gather of `samples` at `size_index`, or nullptr.
const LinkSample* ContiguousGather(const std::vector<GroupSample>& samples,
                                   int size_index) {
  for (const GroupSample& s : samples) {
    if (s.size_index == size_index && s.sample.op == StepOp::kAllGather &&
        s.sample.packed_bytes == 0) {
      return &s.sample;
    }
  }
  return nullptr;
}

// What a sample does locally besides its collective: `size`, the bytes
// that decide whether it is large enough to fit a rate to (at least
// kLocalRateFitMinBytes), and `bytes`, those it copies or reduces. A size
// of 0: the sample does no such work.
struct LocalWork {
  int64_t size = 0;
  double bytes = 0;
};

// The median, over the samples whose `work` is large enough, of their time
// beyond the contiguous gather of their group and size (the same bytes over
// the same links, timed in the same sweep, so link errors cancel) per byte
// of that work. A median, as smaller work drowns in the timing noise of a
// busy machine either way. nullopt without such pairs.
template <typename Work>
std::optional<double> MedianUsPerLocalByte(const ByGroup& by_group, Work work) {
  std::vector<double> us_per_byte;
  for (const std::vector<GroupSample>& samples : by_group) {
    for (const GroupSample& s : samples) {
      const LocalWork w = work(s);
      if (w.size < kLocalRateFitMinBytes) continue;
      const LinkSample* plain = ContiguousGather(samples, s.size_index);
      if (plain == nullptr) continue;
      us_per_byte.push_back((s.sample.time_us - plain->time_us) / w.bytes);
    }
  }
  if (us_per_byte.empty()) return std::nullopt;
  return Median(us_per_byte);
}

// The copy rate, GB/s, of the strided gathers of `sizes` that unpack at
// least kLocalRateFitMinBytes: their time beyond the contiguous gather per
// unpacked byte (MedianUsPerLocalByte), as GB/s (a median of 0 or less:
// the mesh's fastest rate). nullopt without such pairs.
std::optional<double> FitCopyRate(const ByGroup& by_group, Sizes sizes) {
  const std::optional<double> median =
      MedianUsPerLocalByte(by_group, [sizes](const GroupSample& s) {
        if (!IsStrided(s, sizes)) return LocalWork{};
        return LocalWork{s.sample.packed_bytes,
                         static_cast<double>(s.sample.packed_bytes)};
      });
  if (!median.has_value()) return std::nullopt;
  return RateOf(*median, kMaxLinkBandwidthGBps);
}

// The reduction rate, GB/s, of the reduce_scatters of `sizes` of at least
// kLocalRateFitMinBytes: their time beyond the contiguous gather (the same
// bytes over the same links and rounds) per byte each member reduces
// (ReducedFactor; MedianUsPerLocalByte). nullopt without such pairs, or
// where reduce_scatters take no longer (a median of 0 or less: reductions
// cost nothing the links do not explain).
std::optional<double> FitReduceRate(const ByGroup& by_group, Sizes sizes) {
  const std::optional<double> median =
      MedianUsPerLocalByte(by_group, [sizes](const GroupSample& s) {
        const LinkSample& rs = s.sample;
        if (rs.op != StepOp::kReduceScatter || !OfSizes(s, sizes)) {
          return LocalWork{};
        }
        return LocalWork{rs.bytes, ReducedFactor(rs.op, rs.members) *
                                       static_cast<double>(rs.bytes)};
      });
  if (!median.has_value()) return std::nullopt;
  return RateOf(*median, std::nullopt);
}

// The median |relative error| of `mesh`'s predictions for the strided
// gathers of `sizes`; -1 without any.
double CopyError(const Mesh& mesh, const std::vector<Group>& groups,
                 const ByGroup& by_group, Sizes sizes) {
  const CostModel model = ModelOf(mesh);
  std::vector<double> errors;
  for (size_t i = 0; i < groups.size(); ++i) {
    for (const GroupSample& s : by_group[i]) {
      if (IsStrided(s, sizes)) {
        errors.push_back(RelativeError(model, groups[i], s.sample));
      }
    }
  }
  return errors.empty() ? -1 : MedianAbs(errors);
}

// Per group, an all_to_all latency (µs) or nullopt.
using Latencies = std::vector<std::optional<double>>;

// `mesh` with groups[i]'s all_to_all latency `latencies[i]` where set: a
// dim's link, or every flattened group's own link over the same dims.
absl::StatusOr<Mesh> WithAllToAllLatencies(const Mesh& mesh,
                                           const std::vector<Group>& groups,
                                           const Latencies& latencies) {
  MeshSpec spec = mesh.ToSpec();
  spec.links.resize(static_cast<size_t>(mesh.ndim()));
  spec.flattened_links.resize(mesh.flattened().size());
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!latencies[i].has_value()) continue;
    if (groups[i].size() == 1) {
      spec.links[groups[i][0]].all_to_all_us = latencies[i];
      continue;
    }
    for (size_t f = 0; f < mesh.flattened().size(); ++f) {
      if (mesh.WithoutUnitDims(mesh.flattened()[f]) == groups[i]) {
        spec.flattened_links[f].all_to_all_us = latencies[i];
      }
    }
  }
  return Mesh::Create(spec);
}

// Per group, the all_to_all latency that, with `mesh`'s links, copy rate
// and base latency, predicts its all_to_alls of `sizes` with the least sum
// of |relative error|: the weighted median, by 1 / measured time, of each
// one's time beyond the rest of its price (base, bytes, packing). The
// latency is fitted, not the hop's, as it grows with the group's size where
// ranks wait to be scheduled (docs/DESIGN.md §3.3). nullopt without them.
absl::StatusOr<Latencies> FitAllToAllLatencies(const Mesh& mesh,
                                               const std::vector<Group>& groups,
                                               const ByGroup& by_group,
                                               Sizes sizes) {
  absl::StatusOr<Mesh> unpriced =
      WithAllToAllLatencies(mesh, groups, Latencies(groups.size(), 0.0));
  if (!unpriced.ok()) return unpriced.status();
  const CostModel model = ModelOf(*unpriced);
  Latencies latencies(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    std::vector<double> beyond;
    std::vector<double> weights;
    for (const GroupSample& s : by_group[i]) {
      if (s.sample.op != StepOp::kAllToAll || !OfSizes(s, sizes)) continue;
      beyond.push_back(s.sample.time_us -
                       PredictedUs(model, groups[i], s.sample));
      weights.push_back(1 / s.sample.time_us);
    }
    if (beyond.empty()) continue;
    latencies[i] =
        std::clamp(WeightedMedian(beyond, weights), 0.0, kMaxLinkLatencyUs);
  }
  return latencies;
}

// A mesh with fitted links and copy rate, and the all_to_all latencies
// fitted under them (also in the mesh).
struct FittedMesh {
  Mesh mesh;
  Latencies all_to_all_us;
};

// `mesh` with the fitted links, `rates` (fitted to the samples of
// `sizes`) and the all_to_all latencies fitted to the all_to_alls of
// `sizes` under them.
absl::StatusOr<FittedMesh> MeshWithFitsAndRates(
    const Mesh& mesh, const std::vector<Group>& groups, const ByGroup& by_group,
    const Fits& fits, const std::vector<bool>& own, Sizes sizes,
    const MeshRates& rates) {
  absl::StatusOr<Mesh> links = MeshWithFits(mesh, groups, fits, own, rates);
  if (!links.ok()) return links.status();
  absl::StatusOr<Latencies> latencies =
      FitAllToAllLatencies(*links, groups, by_group, sizes);
  if (!latencies.ok()) return latencies.status();
  absl::StatusOr<Mesh> fitted =
      WithAllToAllLatencies(*links, groups, *latencies);
  if (!fitted.ok()) return fitted.status();
  return FittedMesh{*std::move(fitted), *std::move(latencies)};
}

// The base latencies tried: kBaseLatencyUs, then up by kBaseLatencyStep while
// below the fastest ring measured (no collective costs less than its base).
std::vector<double> BaseCandidates(const ByGroup& by_group) {
  double fastest = kMaxLinkLatencyUs;
  for (const std::vector<GroupSample>& samples : by_group) {
    for (const GroupSample& s : samples) {
      if (FitsLink(s.sample)) fastest = std::min(fastest, s.sample.time_us);
    }
  }
  std::vector<double> bases = {kBaseLatencyUs};
  while (bases.back() * kBaseLatencyStep < fastest) {
    bases.push_back(bases.back() * kBaseLatencyStep);
  }
  return bases;
}

// The median |relative error| over every sample of `sizes` (all_to_alls
// and strided gathers included) when links and all_to_all latencies are
// fitted to `sizes` under `rates` (its base latency the one tried; the
// copy and reduction rates do not depend on it); nullopt when a group's
// fit fails.
std::optional<double> ErrorWithBase(const Mesh& mesh,
                                    const std::vector<Group>& groups,
                                    const ByGroup& by_group, Sizes sizes,
                                    const MeshRates& rates) {
  const Fits fits = FitAll(by_group, sizes, rates);
  for (const std::optional<LinkFit>& fit : fits) {
    if (!fit.has_value()) return std::nullopt;
  }
  absl::StatusOr<FittedMesh> fitted = MeshWithFitsAndRates(
      mesh, groups, by_group, fits, std::vector<bool>(groups.size(), true),
      sizes, rates);
  if (!fitted.ok()) return std::nullopt;
  const CostModel model = ModelOf(fitted->mesh);
  std::vector<double> errors;
  for (size_t i = 0; i < groups.size(); ++i) {
    for (const GroupSample& s : by_group[i]) {
      if (OfSizes(s, sizes)) {
        errors.push_back(RelativeError(model, groups[i], s.sample));
      }
    }
  }
  return MedianAbs(errors);
}

// The copy and reduction rates fitted to the samples of `sizes`, and the
// base latency that, with links fitted to it, predicts them best
// (docs/DESIGN.md §3.3): a collective's fixed cost is common to every
// group, while links are per group (unset: kBaseLatencyUs).
MeshRates FitRates(const Mesh& mesh, const std::vector<Group>& groups,
                   const ByGroup& by_group, Sizes sizes) {
  MeshRates rates{FitCopyRate(by_group, sizes), FitReduceRate(by_group, sizes),
                  std::nullopt};
  double best_error = 0;
  std::optional<double> best;
  for (double base : BaseCandidates(by_group)) {
    MeshRates tried = rates;
    tried.base_us = base;
    const std::optional<double> error =
        ErrorWithBase(mesh, groups, by_group, sizes, tried);
    if (error.has_value() && (!best.has_value() || *error < best_error)) {
      best_error = *error;
      best = base;
    }
  }
  if (best != kBaseLatencyUs) rates.base_us = best;
  return rates;
}

// Whether the fits on even sizes hold what predicting `op` on groups[i]
// needs: the group's own, or each of its dims' for a flattened all_to_all.
bool HasEvenFits(const std::vector<Group>& groups, const Fits& even, size_t i,
                 StepOp op) {
  if (op != StepOp::kAllToAll) return even[i].has_value();
  for (int d : groups[i]) {
    const auto it = std::find(groups.begin(), groups.end(), Group{d});
    if (it == groups.end() || !even[it - groups.begin()].has_value()) {
      return false;
    }
  }
  return true;
}

// Per group and op: the relative errors on the odd sizes of the links
// (and copy rate and base latency) fitted on the even ones, and their
// median |error| (-1 when none). Returns the strided gathers' held-out
// error.
absl::StatusOr<double> HeldOutErrors(const Mesh& mesh,
                                     const std::vector<Group>& groups,
                                     const ByGroup& by_group,
                                     std::vector<GroupCalibration>& out) {
  const MeshRates rates = FitRates(mesh, groups, by_group, Sizes::kEven);
  const Fits even = FitAll(by_group, Sizes::kEven, rates);
  absl::StatusOr<FittedMesh> even_mesh = MeshWithFitsAndRates(
      mesh, groups, by_group, even, std::vector<bool>(groups.size(), true),
      Sizes::kEven, rates);
  if (!even_mesh.ok()) return even_mesh.status();
  const CostModel model = ModelOf(even_mesh->mesh);
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupCalibration& g = out[i];
    for (size_t o = 0; o < g.held_out_error.size(); ++o) {
      const StepOp op = kCalibratedOps[o];
      g.held_out_error[o] = -1;
      if (!HasEvenFits(groups, even, i, op)) continue;
      for (const GroupSample& s : by_group[i]) {
        if (s.even() || s.sample.op != op || IsStridedGather(s.sample)) {
          continue;
        }
        g.held_out_errors[o].push_back(RelativeError(model, g.group, s.sample));
      }
      if (!g.held_out_errors[o].empty()) {
        g.held_out_error[o] = MedianAbs(g.held_out_errors[o]);
      }
    }
  }
  return CopyError(even_mesh->mesh, groups, by_group, Sizes::kOdd);
}

// By op, the median |error| of every group's held-out errors together.
PerOp PooledHeldOutErrors(const std::vector<GroupCalibration>& groups) {
  PerOp pooled;
  for (size_t o = 0; o < pooled.size(); ++o) {
    std::vector<double> all;
    for (const GroupCalibration& g : groups) {
      all.insert(all.end(), g.held_out_errors[o].begin(),
                 g.held_out_errors[o].end());
    }
    pooled[o] = all.empty() ? -1 : MedianAbs(all);
  }
  return pooled;
}

// Which flattened groups the dims' links (`dims_mesh`) mispredict: the
// groups that get their own links.
std::vector<bool> OwnLinks(const Mesh& dims_mesh, const ByGroup& by_group,
                           std::vector<GroupCalibration>& out) {
  const CostModel model = ModelOf(dims_mesh);
  std::vector<bool> own(out.size(), false);
  for (size_t i = 0; i < out.size(); ++i) {
    GroupCalibration& g = out[i];
    if (g.group.size() < 2) continue;
    std::vector<double> errors;
    for (const GroupSample& s : by_group[i]) {
      if (!FitsLink(s.sample)) continue;
      errors.push_back(RelativeError(model, g.group, s.sample));
    }
    g.dims_error = MedianAbs(errors);
    g.own_link = own[i] = g.dims_error > kOwnLinkError;
  }
  return own;
}

// The calibrated mesh: the dims' fitted links, flattened groups' own where
// `own`, and `fitted`'s rates, base latency and every group's all_to_all
// latency (also into `out`).
absl::StatusOr<Mesh> CalibratedMesh(const Mesh& mesh, const FittedMesh& fitted,
                                    const std::vector<Group>& groups,
                                    const Fits& fits,
                                    const std::vector<bool>& own,
                                    std::vector<GroupCalibration>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].all_to_all_us = fitted.all_to_all_us[i];
  }
  const MeshRates rates{fitted.mesh.copy_gbps(), fitted.mesh.reduce_gbps(),
                        fitted.mesh.base_us()};
  absl::StatusOr<Mesh> links = MeshWithFits(mesh, groups, fits, own, rates);
  if (!links.ok()) return links.status();
  return WithAllToAllLatencies(*links, groups, fitted.all_to_all_us);
}

}  // namespace

absl::StatusOr<Calibration> Calibrate(
    const Mesh& mesh, absl::Span<const CalibrationSample> samples) {
  const std::vector<Group> groups = CalibrationGroups(mesh);
  absl::StatusOr<ByGroup> by_group = SplitByGroup(mesh, groups, samples);
  if (!by_group.ok()) return by_group.status();
  const MeshRates rates = FitRates(mesh, groups, *by_group, Sizes::kAll);
  absl::StatusOr<std::vector<GroupCalibration>> out =
      FitGroups(mesh, groups, *by_group, rates);
  if (!out.ok()) return out.status();
  Fits fits;
  for (const GroupCalibration& g : *out) fits.push_back(g.fit);
  const std::vector<bool> every(groups.size(), true);
  absl::StatusOr<FittedMesh> fitted = MeshWithFitsAndRates(
      mesh, groups, *by_group, fits, every, Sizes::kAll, rates);
  if (!fitted.ok()) return fitted.status();
  Predict(fitted->mesh, *by_group, *out);
  const double copy_error =
      CopyError(fitted->mesh, groups, *by_group, Sizes::kAll);
  MeshRates unpriced_copy = rates;
  unpriced_copy.copy_gbps = std::nullopt;
  absl::StatusOr<Mesh> default_copy =
      MeshWithFits(mesh, groups, fits, every, unpriced_copy);
  if (!default_copy.ok()) return default_copy.status();
  const double copy_error_unpriced =
      CopyError(*default_copy, groups, *by_group, Sizes::kAll);
  absl::StatusOr<double> copy_held_out =
      HeldOutErrors(mesh, groups, *by_group, *out);
  if (!copy_held_out.ok()) return copy_held_out.status();
  const std::vector<bool> none(groups.size(), false);
  absl::StatusOr<Mesh> dims_mesh =
      MeshWithFits(mesh, groups, fits, none, unpriced_copy);
  if (!dims_mesh.ok()) return dims_mesh.status();
  const std::vector<bool> own = OwnLinks(*dims_mesh, *by_group, *out);
  absl::StatusOr<Mesh> calibrated =
      CalibratedMesh(mesh, *fitted, groups, fits, own, *out);
  if (!calibrated.ok()) return calibrated.status();
  const PerOp pooled = PooledHeldOutErrors(*out);
  return Calibration{*std::move(out), pooled,
                     copy_error,      copy_error_unpriced,
                     *copy_held_out,  *std::move(calibrated)};
}

}  // namespace reshard
