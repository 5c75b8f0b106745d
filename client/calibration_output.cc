#include "client/calibration_output.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/plan_flags.h"
#include "common/json_text.h"
#include "planner/cost/calibration_plans.h"
#include "planner/cost/cost_model.h"

namespace reshard::client {
namespace {

std::string Percent(double fraction) {
  return fraction < 0 ? "-" : absl::StrFormat("%.1f%%", fraction * 100);
}

// The samples of group `g`, in the order they ran (the order of its
// predictions).
std::vector<const CalibrationSample*> SamplesOf(const CalibrationReport& r,
                                                const Mesh& mesh,
                                                const Group& g) {
  std::vector<const CalibrationSample*> of_group;
  for (const CalibrationSample& s : r.samples) {
    if (mesh.WithoutUnitDims(s.group) == g) of_group.push_back(&s);
  }
  return of_group;
}

void Round(std::optional<double>& value) {
  if (value.has_value()) value = std::stod(absl::StrFormat("%.4g", *value));
}

void Round(LinkParams& link) {
  Round(link.bandwidth_gbps);
  Round(link.latency_us);
  Round(link.all_to_all_us);
}

// An error, or null where there is none (-1).
std::string OptionalError(double e) { return e < 0 ? "null" : FormatDouble(e); }

std::string PerOpJson(const PerOp& errors) {
  std::vector<std::string> fields;
  for (size_t o = 0; o < errors.size(); ++o) {
    fields.push_back(absl::StrCat(JsonString(StepOpName(kCalibratedOps[o])),
                                  ": ", OptionalError(errors[o])));
  }
  return absl::StrCat("{", absl::StrJoin(fields, ", "), "}");
}

std::string SamplesJson(const CalibrationReport& r, const Mesh& mesh,
                        const GroupCalibration& g) {
  std::vector<std::string> rows;
  const std::vector<const CalibrationSample*> of_group =
      SamplesOf(r, mesh, g.group);
  for (size_t i = 0; i < of_group.size(); ++i) {
    const LinkSample& s = of_group[i]->sample;
    rows.push_back(absl::StrCat(
        "{\"op\": ", JsonString(StepOpName(s.op)), ", \"bytes\": ", s.bytes,
        ", \"packed_bytes\": ", s.packed_bytes,
        ", \"measured_us\": ", FormatDouble(s.time_us),
        ", \"fitted_us\": ", FormatDouble(g.predicted_us[i]),
        ", \"relative_error\": ", FormatDouble(g.relative_errors[i]), "}"));
  }
  return absl::StrCat("[", absl::StrJoin(rows, ", "), "]");
}

std::string GroupJson(const CalibrationReport& r, const Mesh& mesh,
                      const GroupCalibration& g) {
  return absl::StrCat(
      "{\"group\": ", JsonString(mesh.GroupName(g.group)),
      ", \"members\": ", g.members,
      ", \"latency_us\": ", FormatDouble(g.fit.latency_us),
      ", \"bandwidth_gbps\": ", FormatDouble(g.fit.bandwidth_gbps),
      ", \"all_to_all_us\": ", FormatOptionalDouble(g.all_to_all_us, "null"),
      ", \"median_abs_error\": ", FormatDouble(g.median_abs_error),
      ", \"held_out_error\": ", PerOpJson(g.held_out_error),
      ", \"dims_error\": ", FormatDouble(g.dims_error),
      ", \"own_link\": ", g.own_link ? "true" : "false",
      ", \"samples\": ", SamplesJson(r, mesh, g), "}");
}

}  // namespace

Mesh ForPasting(const Mesh& mesh) {
  MeshSpec spec = mesh.ToSpec();
  for (LinkParams& link : spec.links) Round(link);
  for (LinkParams& link : spec.flattened_links) Round(link);
  Round(spec.copy_gbps);
  Round(spec.reduce_gbps);
  Round(spec.base_us);
  // Rounding keeps every value in its range but at its very edge.
  absl::StatusOr<Mesh> rounded = Mesh::Create(std::move(spec));
  return rounded.ok() ? *std::move(rounded) : mesh;
}

std::vector<std::string> PoorFits(const Calibration& c, double bound) {
  std::vector<std::string> lines;
  for (const GroupCalibration& g : c.groups) {
    std::vector<std::string> ops;
    for (size_t o = 0; o < g.held_out_error.size(); ++o) {
      if (g.held_out_error[o] > bound) {
        ops.push_back(absl::StrCat(StepOpName(kCalibratedOps[o]), " ",
                                   Percent(g.held_out_error[o])));
      }
    }
    if (ops.empty()) continue;
    lines.push_back(absl::StrCat("group ", c.mesh.GroupName(g.group),
                                 ": held-out error ", absl::StrJoin(ops, ", "),
                                 " (above ", Percent(bound), ")"));
  }
  return lines;
}

void PrintCalibrationText(const CalibrationReport& r, std::ostream& out) {
  const Calibration& c = *r.calibration;
  out << "calibration of job " << r.job << ": " << r.sizes.size() << " sizes, "
      << r.sizes.front() << " to " << r.sizes.back() << " bytes\n";
  out << absl::StrFormat("%-8s %7s %12s %14s %10s %8s  %-33s %9s\n", "group",
                         "members", "latency_us", "bandwidth_GBps", "a2a_us",
                         "fit_err", "held-out err: AG / RS / AR / A2A",
                         "dims_err");
  for (const GroupCalibration& g : c.groups) {
    std::vector<std::string> held_out;
    for (double e : g.held_out_error) held_out.push_back(Percent(e));
    out << absl::StrFormat(
        "%-8s %7d %12.2f %14.4g %10s %8s  %-33s %9s\n",
        c.mesh.GroupName(g.group), g.members, g.fit.latency_us,
        g.fit.bandwidth_gbps,
        g.all_to_all_us.has_value() ? absl::StrFormat("%.2f", *g.all_to_all_us)
                                    : "-",
        Percent(g.median_abs_error), absl::StrJoin(held_out, " / "),
        g.group.size() < 2 ? "-" : Percent(g.dims_error));
  }
  const std::vector<std::string> flags = LinkFlags(ForPasting(c.mesh));
  std::vector<std::string> pooled;
  for (double e : c.held_out_error) pooled.push_back(Percent(e));
  out << "held-out error, every group, AG / RS / AR / A2A: "
      << absl::StrJoin(pooled, " / ") << "\n";
  if (c.mesh.copy_gbps().has_value()) {
    out << absl::StrFormat(
        "copy rate: %.4g GB/s; strided gathers' error %s (held-out %s; %s "
        "with packing unpriced)\n",
        *c.mesh.copy_gbps(), Percent(c.copy_error),
        Percent(c.copy_held_out_error), Percent(c.copy_error_unpriced));
  }
  if (c.mesh.reduce_gbps().has_value()) {
    out << absl::StrFormat("reduction rate: %.4g GB/s\n",
                           *c.mesh.reduce_gbps());
  }
  out << absl::StrFormat("base latency per collective: %.4g us\n",
                         c.mesh.base_us().value_or(kBaseLatencyUs));
  out << "links: " << absl::StrJoin(flags, " ") << "\n";
  for (const std::string& poor : PoorFits(c, kPoorFitError)) {
    out << "warning [poor_fit]: " << poor
        << ": its links mispredict; calibrate again on a quieter machine or "
           "with more --iters and --small_passes\n";
  }
}

void PrintCalibrationJson(const CalibrationReport& r, std::ostream& out) {
  const Calibration& c = *r.calibration;
  std::vector<std::string> groups;
  for (const GroupCalibration& g : c.groups) {
    groups.push_back(GroupJson(r, c.mesh, g));
  }
  std::vector<std::string> links;
  for (const std::string& link : LinkFlagValues(c.mesh)) {
    links.push_back(JsonString(link));
  }
  std::vector<std::string> poor;
  for (const std::string& line : PoorFits(c, kPoorFitError)) {
    poor.push_back(JsonString(line));
  }
  out << "{\"job\": " << JsonString(r.job) << ", \"sizes\": ["
      << absl::StrJoin(r.sizes, ", ") << "], \"groups\": ["
      << absl::StrJoin(groups, ", ")
      << "], \"held_out_error\": " << PerOpJson(c.held_out_error)
      << ", \"links\": [" << absl::StrJoin(links, ", ") << "], \"copy_gbps\": "
      << FormatOptionalDouble(c.mesh.copy_gbps(), "null")
      << ", \"base_us\": " << FormatOptionalDouble(c.mesh.base_us(), "null")
      << ", \"reduce_gbps\": "
      << FormatOptionalDouble(c.mesh.reduce_gbps(), "null")
      << ", \"copy_error\": " << OptionalError(c.copy_error)
      << ", \"copy_held_out_error\": " << OptionalError(c.copy_held_out_error)
      << ", \"copy_error_unpriced\": " << OptionalError(c.copy_error_unpriced)
      << ", \"poor_fits\": [" << absl::StrJoin(poor, ", ") << "]}\n";
}

}  // namespace reshard::client
