#include "planner/link_calibration.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "planner/cost_model.h"
#include "planner/tensor_spec.h"

namespace reshard {
namespace {

// The samples of `group`, and which of them have even size indices.
struct GroupSamples {
  std::vector<LinkSample> all;
  std::vector<LinkSample> even;
  std::vector<LinkSample> odd;
};

absl::StatusOr<std::vector<GroupSamples>> SplitByGroup(
    const Mesh& mesh, const std::vector<Group>& groups,
    absl::Span<const CalibrationSample> samples) {
  std::vector<GroupSamples> by_group(groups.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const CalibrationSample& s = samples[i];
    const auto it =
        std::find(groups.begin(), groups.end(), mesh.WithoutUnitDims(s.group));
    if (it == groups.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("samples[", i, "]: group ", mesh.GroupName(s.group),
                       " is not calibrated on this mesh"));
    }
    GroupSamples& g = by_group[it - groups.begin()];
    g.all.push_back(s.sample);
    (s.size_index % 2 == 0 ? g.even : g.odd).push_back(s.sample);
  }
  return by_group;
}

// Per op: the relative errors on `odd` of a fit on `even` (none when that
// fit fails), and their median |error| (-1 when none).
void HeldOutErrors(const GroupSamples& g, GroupCalibration& out) {
  out.held_out_error.fill(-1);
  absl::StatusOr<LinkFit> fit = FitLink(g.even);
  if (!fit.ok()) return;
  for (size_t o = 0; o < out.held_out_error.size(); ++o) {
    std::vector<LinkSample> of_op;
    for (const LinkSample& s : g.odd) {
      if (s.op == kCalibratedOps[o]) of_op.push_back(s);
    }
    if (of_op.empty()) continue;
    out.held_out_errors[o] =
        RelativeErrors(of_op, fit->latency_us, fit->bandwidth_gbps);
    out.held_out_error[o] = MedianAbs(out.held_out_errors[o]);
  }
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

// `mesh` with `links` per dim and `own` per flattened group.
MeshSpec SpecWithLinks(const Mesh& mesh, std::vector<LinkParams> links,
                       std::vector<LinkParams> own) {
  MeshSpec spec = mesh.ToSpec();
  spec.links = std::move(links);
  spec.flattened_links = std::move(own);
  return spec;
}

// The median |error| of the cost model on `mesh` (its dims' links) for a
// group's samples.
double DimsError(const Mesh& mesh, const Group& group,
                 const std::vector<LinkSample>& samples) {
  const TensorSpec unused = *TensorSpec::Create({1}, DType::kFloat32);
  const CostModel model(mesh, unused, CostOptions{});
  std::vector<double> errors;
  for (const LinkSample& s : samples) {
    errors.push_back((model.CollectiveTime(s.op, group, s.bytes) - s.time_us) /
                     s.time_us);
  }
  return MedianAbs(errors);
}

LinkParams LinkOf(const LinkFit& fit) {
  return {fit.bandwidth_gbps, fit.latency_us};
}

// Flattened groups whose dims' links miss: their own links.
absl::StatusOr<Mesh> WithOwnLinks(const Mesh& dims_mesh,
                                  std::vector<GroupCalibration>& groups,
                                  const std::vector<GroupSamples>& samples) {
  std::vector<LinkParams> own(dims_mesh.flattened().size());
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupCalibration& g = groups[i];
    if (g.group.size() < 2) continue;
    g.dims_error = DimsError(dims_mesh, g.group, samples[i].all);
    g.own_link = g.dims_error > kOwnLinkError;
    if (!g.own_link) continue;
    for (size_t f = 0; f < own.size(); ++f) {
      if (dims_mesh.WithoutUnitDims(dims_mesh.flattened()[f]) == g.group) {
        own[f] = LinkOf(g.fit);
      }
    }
  }
  return Mesh::Create(SpecWithLinks(dims_mesh, dims_mesh.links(), own));
}

}  // namespace

absl::StatusOr<Calibration> Calibrate(
    const Mesh& mesh, absl::Span<const CalibrationSample> samples) {
  const std::vector<Group> groups = CalibrationGroups(mesh);
  absl::StatusOr<std::vector<GroupSamples>> by_group =
      SplitByGroup(mesh, groups, samples);
  if (!by_group.ok()) return by_group.status();
  std::vector<GroupCalibration> out;
  std::vector<LinkParams> links = mesh.links();
  for (size_t i = 0; i < groups.size(); ++i) {
    absl::StatusOr<LinkFit> fit = FitLink((*by_group)[i].all);
    if (!fit.ok()) {
      return absl::Status(fit.status().code(),
                          absl::StrCat("group ", mesh.GroupName(groups[i]),
                                       ": ", fit.status().message()));
    }
    GroupCalibration& g = out.emplace_back();
    g.group = groups[i];
    g.members = mesh.GroupSize(groups[i]);
    g.fit = *std::move(fit);
    HeldOutErrors((*by_group)[i], g);
    if (g.group.size() == 1) links[g.group[0]] = LinkOf(g.fit);
  }
  absl::StatusOr<Mesh> dims_mesh = Mesh::Create(SpecWithLinks(mesh, links, {}));
  if (!dims_mesh.ok()) return dims_mesh.status();
  absl::StatusOr<Mesh> calibrated = WithOwnLinks(*dims_mesh, out, *by_group);
  if (!calibrated.ok()) return calibrated.status();
  const PerOp pooled = PooledHeldOutErrors(out);
  return Calibration{std::move(out), pooled, *std::move(calibrated)};
}

}  // namespace reshard
