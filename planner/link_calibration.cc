#include "planner/link_calibration.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "planner/cost_model.h"
#include "planner/tensor_spec.h"

namespace reshard {
namespace {

// One sample of a group, and whether its size index is even.
struct GroupSample {
  LinkSample sample;
  bool even = false;
};
using ByGroup = std::vector<std::vector<GroupSample>>;
// Every group's fit, in CalibrationGroups' order; nullopt where it failed.
using Fits = std::vector<std::optional<LinkFit>>;

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
    by_group[it - groups.begin()].push_back({s.sample, s.size_index % 2 == 0});
  }
  return by_group;
}

// Whether a group's own link is fitted to `op`: every op of a dim, the
// rings of a flattened group (its all_to_all follows its dims' links).
bool FitsOp(const Group& group, StepOp op) {
  return group.size() < 2 || op != StepOp::kAllToAll;
}

// The samples a group's link is fitted to, of even sizes only or of all.
std::vector<LinkSample> FitSamples(const Group& group,
                                   const std::vector<GroupSample>& samples,
                                   bool even_only) {
  std::vector<LinkSample> fitted;
  for (const GroupSample& s : samples) {
    if ((s.even || !even_only) && FitsOp(group, s.sample.op)) {
      fitted.push_back(s.sample);
    }
  }
  return fitted;
}

LinkParams LinkOf(const LinkFit& fit) {
  return {fit.bandwidth_gbps, fit.latency_us};
}

// `mesh` with each dim's link from its group's fit and, where `own[i]`,
// the flattened groups[i]'s own link from its fit; other flattened groups
// have none. Links of groups without a fit stay `mesh`'s.
absl::StatusOr<Mesh> MeshWithFits(const Mesh& mesh,
                                  const std::vector<Group>& groups,
                                  const Fits& fits,
                                  const std::vector<bool>& own) {
  MeshSpec spec = mesh.ToSpec();
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

// (predicted - measured) / measured of `s` under `model`.
double RelativeError(const CostModel& model, const Group& group,
                     const LinkSample& s) {
  return (model.CollectiveTime(s.op, group, s.bytes) - s.time_us) / s.time_us;
}

// A default-model CostModel over `mesh`: CollectiveTime needs no tensor.
CostModel ModelOf(const Mesh& mesh) {
  static const TensorSpec* const unused =
      new TensorSpec(*TensorSpec::Create({1}, DType::kFloat32));
  return CostModel(mesh, *unused, CostOptions{});
}

// Every group's fit on all its sizes; a failed fit fails naming the group.
absl::StatusOr<std::vector<GroupCalibration>> FitGroups(
    const Mesh& mesh, const std::vector<Group>& groups,
    const ByGroup& by_group) {
  std::vector<GroupCalibration> out;
  for (size_t i = 0; i < groups.size(); ++i) {
    absl::StatusOr<LinkFit> fit =
        FitLink(FitSamples(groups[i], by_group[i], false));
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
      g.predicted_us.push_back(
          model.CollectiveTime(s.sample.op, g.group, s.sample.bytes));
      g.relative_errors.push_back(RelativeError(model, g.group, s.sample));
    }
    g.median_abs_error = MedianAbs(g.relative_errors);
  }
}

// Whether the fits on even sizes hold what predicting `op` on groups[i]
// needs: the group's own, or each of its dims' for a flattened all_to_all.
bool HasEvenFits(const std::vector<Group>& groups, const Fits& even, size_t i,
                 StepOp op) {
  if (FitsOp(groups[i], op)) return even[i].has_value();
  for (int d : groups[i]) {
    const auto it = std::find(groups.begin(), groups.end(), Group{d});
    if (it == groups.end() || !even[it - groups.begin()].has_value()) {
      return false;
    }
  }
  return true;
}

// Per group and op: the relative errors on the odd sizes of the links
// fitted on the even ones, and their median |error| (-1 when none).
absl::Status HeldOutErrors(const Mesh& mesh, const std::vector<Group>& groups,
                           const ByGroup& by_group,
                           std::vector<GroupCalibration>& out) {
  Fits even;
  for (size_t i = 0; i < groups.size(); ++i) {
    absl::StatusOr<LinkFit> fit =
        FitLink(FitSamples(groups[i], by_group[i], true));
    even.push_back(fit.ok() ? std::optional<LinkFit>(*std::move(fit))
                            : std::nullopt);
  }
  absl::StatusOr<Mesh> even_mesh =
      MeshWithFits(mesh, groups, even, std::vector<bool>(groups.size(), true));
  if (!even_mesh.ok()) return even_mesh.status();
  const CostModel model = ModelOf(*even_mesh);
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupCalibration& g = out[i];
    for (size_t o = 0; o < g.held_out_error.size(); ++o) {
      const StepOp op = kCalibratedOps[o];
      g.held_out_error[o] = -1;
      if (!HasEvenFits(groups, even, i, op)) continue;
      for (const GroupSample& s : by_group[i]) {
        if (s.even || s.sample.op != op) continue;
        g.held_out_errors[o].push_back(RelativeError(model, g.group, s.sample));
      }
      if (!g.held_out_errors[o].empty()) {
        g.held_out_error[o] = MedianAbs(g.held_out_errors[o]);
      }
    }
  }
  return absl::OkStatus();
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
      if (!FitsOp(g.group, s.sample.op)) continue;
      errors.push_back(RelativeError(model, g.group, s.sample));
    }
    g.dims_error = MedianAbs(errors);
    g.own_link = own[i] = g.dims_error > kOwnLinkError;
  }
  return own;
}

}  // namespace

absl::StatusOr<Calibration> Calibrate(
    const Mesh& mesh, absl::Span<const CalibrationSample> samples) {
  const std::vector<Group> groups = CalibrationGroups(mesh);
  absl::StatusOr<ByGroup> by_group = SplitByGroup(mesh, groups, samples);
  if (!by_group.ok()) return by_group.status();
  absl::StatusOr<std::vector<GroupCalibration>> out =
      FitGroups(mesh, groups, *by_group);
  if (!out.ok()) return out.status();
  Fits fits;
  for (const GroupCalibration& g : *out) fits.push_back(g.fit);
  const std::vector<bool> every(groups.size(), true);
  absl::StatusOr<Mesh> fit_mesh = MeshWithFits(mesh, groups, fits, every);
  if (!fit_mesh.ok()) return fit_mesh.status();
  Predict(*fit_mesh, *by_group, *out);
  if (absl::Status s = HeldOutErrors(mesh, groups, *by_group, *out); !s.ok()) {
    return s;
  }
  const std::vector<bool> none(groups.size(), false);
  absl::StatusOr<Mesh> dims_mesh = MeshWithFits(mesh, groups, fits, none);
  if (!dims_mesh.ok()) return dims_mesh.status();
  const std::vector<bool> own = OwnLinks(*dims_mesh, *by_group, *out);
  absl::StatusOr<Mesh> calibrated = MeshWithFits(mesh, groups, fits, own);
  if (!calibrated.ok()) return calibrated.status();
  const PerOp pooled = PooledHeldOutErrors(*out);
  return Calibration{*std::move(out), pooled, *std::move(calibrated)};
}

}  // namespace reshard
