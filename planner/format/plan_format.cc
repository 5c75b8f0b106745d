#include "planner/format/plan_format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace reshard {

namespace {

std::string JsonStrings(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(JsonString(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ","), "]");
}

std::string OptionalInt(const std::optional<int>& v) {
  return v.has_value() ? absl::StrCat(*v) : "null";
}

// Rows of cells as lines whose columns line up however long a cell is:
// every column as wide as its widest cell (at least kMinWidths), the text
// columns left-aligned and the last two (numbers) right-aligned.
std::string AlignedColumns(const std::vector<std::vector<std::string>>& rows) {
  constexpr size_t kMinWidths[] = {3, 17, 8, 40, 12, 12};
  constexpr size_t kColumns = sizeof(kMinWidths) / sizeof(kMinWidths[0]);
  size_t widths[kColumns];
  for (size_t c = 0; c < kColumns; ++c) {
    widths[c] = kMinWidths[c];
    for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t c = 0; c < kColumns; ++c) {
      const std::string pad(widths[c] - row[c].size(), ' ');
      absl::StrAppend(&out, c == 0 ? "" : " ", c + 2 >= kColumns ? pad : "",
                      row[c], c + 2 >= kColumns ? "" : pad);
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace

std::string PlanTrace(const Plan& plan) {
  std::string out = plan.src.ToTorchString();
  for (const Step& s : plan.steps) {
    absl::StrAppend(&out, s.group.size() >= 2 ? "-->" : "->",
                    s.to.ToTorchString());
  }
  return out;
}

// Who made the plan, for the table's total line. After the optimal
// planner's budget ran out the plan is its fallback, which the warning
// names (torch_greedy+merge, or gathering to R).
std::string PlannerLabel(const Plan& plan) {
  for (const Warning& w : plan.warnings) {
    if (w.code == WarningCode::kSearchBudgetExceeded) {
      return absl::StrCat(PlannerName(plan.planner),
                          " planner's fallback: see search_budget_exceeded");
    }
  }
  return absl::StrCat(PlannerName(plan.planner), " planner");
}

std::string PlanTable(const Mesh& mesh, const Plan& plan) {
  std::vector<std::vector<std::string>> rows = {
      {"#", "op", "group", "from -> to", "bytes", "us"}};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    rows.push_back({absl::StrCat(i), std::string(StepOpName(s.op)),
                    mesh.GroupName(s.group),
                    absl::StrCat(s.from.ToString(), " -> ", s.to.ToString()),
                    absl::StrCat(s.bytes), absl::StrFormat("%.4f", s.time_us)});
  }
  std::string out = absl::StrCat("trace: ", PlanTrace(plan), "\n");
  absl::StrAppend(&out, AlignedColumns(rows));
  absl::StrAppend(
      &out,
      absl::StrFormat("total: %d steps (%d communicating), %d bytes, %.4f us "
                      "(%s model, %s), peak %d bytes/rank\n",
                      plan.steps.size(), plan.CommunicatingSteps(mesh),
                      plan.total_bytes, plan.total_time_us,
                      CostModelName(plan.cost_model), PlannerLabel(plan),
                      plan.peak_bytes));
  absl::StrAppend(&out, WarningLines(plan));
  return out;
}

std::string WarningLines(const Plan& plan, absl::string_view label) {
  std::string out;
  for (const Warning& w : plan.warnings) {
    absl::StrAppend(&out, "warning [", WarningCodeName(w.code), "]: ", label,
                    w.message, "\n");
  }
  return out;
}

std::string StepJson(const Mesh& mesh, const Step& s) {
  return absl::StrCat(
      "{\"op\":", JsonString(StepOpName(s.op)), ",\"mesh_dims\":[",
      absl::StrJoin(s.group, ","),
      "],\"group\":", JsonString(mesh.GroupName(s.group)), ",\"reduce_op\":",
      UsesReduceOp(s.op) ? JsonString(ReduceOpName(s.reduce_op)) : "null",
      ",\"avg_divisor\":", s.avg_divisor,
      ",\"src_tensor_dim\":", OptionalInt(s.src_tensor_dim),
      ",\"dst_tensor_dim\":", OptionalInt(s.dst_tensor_dim),
      ",\"from\":", JsonString(s.from.ToString()),
      ",\"to\":", JsonString(s.to.ToString()), ",\"bytes\":", s.bytes,
      ",\"time_us\":", FormatDouble(s.time_us), "}");
}

std::string WarningJson(const Warning& w) {
  return absl::StrCat("{\"code\":", JsonString(WarningCodeName(w.code)),
                      ",\"dims\":", JsonStrings(w.dims),
                      ",\"message\":", JsonString(w.message),
                      ",\"saving_us\":", FormatDouble(w.saving_us), "}");
}

std::string MeshJson(const Mesh& mesh, bool with_rank_map) {
  std::vector<std::string> flattened;
  for (const Group& g : mesh.flattened()) {
    std::vector<std::string> names;
    for (int d : g) names.push_back(mesh.dim_names()[d]);
    flattened.push_back(JsonStrings(names));
  }
  std::string rank_map;
  if (with_rank_map) {
    std::vector<int64_t> ranks;
    for (int64_t p = 0; p < mesh.world_size(); ++p) {
      ranks.push_back(mesh.RankAt(p));
    }
    rank_map = absl::StrCat(",\"rank_map\":[", absl::StrJoin(ranks, ","), "]");
  }
  return absl::StrCat("{\"shape\":[", absl::StrJoin(mesh.shape(), ","),
                      "],\"dim_names\":", JsonStrings(mesh.dim_names()),
                      ",\"flattened\":[", absl::StrJoin(flattened, ","), "]",
                      rank_map, "}");
}

std::string PlanJson(const Mesh& mesh, const Plan& plan) {
  std::vector<std::string> steps;
  for (const Step& s : plan.steps) steps.push_back(StepJson(mesh, s));
  std::vector<std::string> warnings;
  for (const Warning& w : plan.warnings) warnings.push_back(WarningJson(w));
  return absl::StrCat(
      "{\"mesh\":", MeshJson(mesh, false), ",\"tensor\":{\"shape\":[",
      absl::StrJoin(plan.tensor.shape(), ","),
      "],\"dtype\":", JsonString(DTypeName(plan.tensor.dtype())),
      "},\"src\":", JsonString(plan.src.ToString()),
      ",\"dst\":", JsonString(plan.dst.ToString()),
      ",\"planner\":", JsonString(PlannerName(plan.planner)),
      plan.planner == PlannerKind::kOptimal
          ? ""
          : absl::StrCat(",\"torch_version\":", JsonString(kTorchVersion)),
      ",\"cost_model\":", JsonString(CostModelName(plan.cost_model)),
      ",\"steps\":[", absl::StrJoin(steps, ","),
      "],\"trace\":", JsonString(PlanTrace(plan)),
      ",\"total_time_us\":", FormatDouble(plan.total_time_us),
      ",\"total_bytes\":", plan.total_bytes,
      ",\"peak_bytes\":", plan.peak_bytes, ",\"warnings\":[",
      absl::StrJoin(warnings, ","),
      "],\"planning_us\":", FormatDouble(plan.planning_us),
      ",\"states_expanded\":", plan.states_expanded,
      ",\"cache_hit\":", plan.cache_hit ? "true" : "false", "}");
}

}  // namespace reshard
