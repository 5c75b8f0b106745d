#include "tests/planner/torch_record.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "reference/plan_check.h"

namespace reshard::testing {
namespace {

// "(Shard(dim=0), Replicate())" -> "Shard(dim=0)->Replicate()".
std::string Transform(const std::string& pair) {
  absl::string_view s = pair;
  absl::ConsumePrefix(&s, "(");
  absl::ConsumeSuffix(&s, ")");
  const std::vector<std::string> parts = absl::StrSplit(s, ", ");
  return absl::StrCat(parts.at(0), "->", parts.at(1));
}

std::string RecordedStep(const Json& info) {
  if (info["type"].string == "_TransformInfo") {
    return absl::StrCat("T", info["mesh_dim"].Int(), " ",
                        Transform(info["src_dst_placements"].string));
  }
  std::string dims = info["attr_original_mesh_dims"].string;
  dims.erase(std::remove_if(
                 dims.begin(), dims.end(),
                 [](char ch) { return ch == '(' || ch == ')' || ch == ' '; }),
             dims.end());
  if (!dims.empty() && dims.back() == ',') dims.pop_back();
  const std::string scale = info["attr_avg_scale"].string;
  // Records of 2.15 and later name the flattened mesh the step runs on.
  const std::string on =
      info.Has("attr_mesh_name")
          ? absl::StrCat(" on ", info["attr_mesh_name"].string)
          : "";
  return absl::StrCat("F", dims, " ",
                      Transform(info["src_dst_placements"].string),
                      scale == "None" ? "" : absl::StrCat(" x", scale), on);
}

// Whether a record names the flattened meshes of its merged steps.
bool NamesGroups(const Json& mode) {
  for (const Json& info : mode["merged"].array) {
    if (info.Has("attr_mesh_name")) return true;
  }
  return false;
}

// A merged reduction that mixes sum and avg reduces as a sum and scales by
// its avg dims' sizes (as PyTorch's merged step does when that product is
// over 1; Reshard also where it is 1). `named`: with the group it runs on.
std::string ReshardStep(const Mesh& mesh, const Step& s, bool named) {
  const Placement from = s.from.placement(s.group[0]);
  const Placement to = s.to.placement(s.group[0]);
  if (s.group.size() == 1) {
    return absl::StrCat("T", s.group[0], " ", from.ToRepr(), "->", to.ToRepr());
  }
  int64_t scale = 1;
  bool avg = false, sum = false;
  for (int m : s.group) {
    if (s.from.placement(m) == Placement::Partial(ReduceOp::kAvg)) {
      scale *= mesh.size(m);
      avg = true;
    }
    sum = sum || s.from.placement(m) == Placement::Partial(ReduceOp::kSum);
  }
  const std::string src =
      scale > 1 || (avg && sum) ? "Partial(sum)" : from.ToRepr();
  return absl::StrCat(
      "F", absl::StrJoin(s.group, ","), " ", src, "->", to.ToRepr(),
      scale > 1 ? absl::StrCat(" x", scale) : "",
      named ? absl::StrCat(" on ", mesh.GroupName(s.group)) : "");
}

// A recorded warning as "code" or "code:dims" (missing groups name dims).
std::string RecordedWarning(const std::string& text,
                            const std::vector<std::string>& names) {
  const size_t at = text.find("flatten mesh dimensions [");
  if (at != std::string::npos) {
    const std::string list = text.substr(at, text.find(']', at) - at);
    std::vector<int> dims;
    for (size_t d = 0; d < names.size(); ++d) {
      if (list.find(absl::StrCat("\"", names[d], "\"")) != std::string::npos) {
        dims.push_back(static_cast<int>(d));
      }
    }
    return absl::StrCat("missing_flattened_group:", absl::StrJoin(dims, ","));
  }
  if (text.find("not evenly divisible") != std::string::npos) {
    return "uneven_merge_refused";
  }
  if (text.find("non-ascending") != std::string::npos) {
    return "non_ascending_merge_refused";
  }
  return absl::StrCat("unknown: ", text.substr(0, 60));
}

std::string ReshardWarning(const Warning& w, const Mesh& mesh) {
  if (w.code != WarningCode::kMissingFlattenedGroup) {
    return std::string(WarningCodeName(w.code));
  }
  std::vector<int> dims;
  for (const std::string& name : w.dims) dims.push_back(mesh.DimIndex(name));
  std::sort(dims.begin(), dims.end());
  return absl::StrCat("missing_flattened_group:", absl::StrJoin(dims, ","));
}

Answer ReshardAnswer(const Plan& plan, const Mesh& mesh, bool named) {
  Answer a;
  for (const Step& s : plan.steps) {
    a.steps.push_back(ReshardStep(mesh, s, named));
  }
  for (const Warning& w : plan.warnings) {
    a.warnings.insert(ReshardWarning(w, mesh));
  }
  return a;
}

const char* ModeKey(PlannerKind planner) {
  return planner == PlannerKind::kTorchGreedy ? "greedy" : "graph";
}

// True when PyTorch's plan holds a transform its executor refuses: Shard ->
// Partial other than sum, or Partial -> another Partial.
bool PlansUnrunnableTransform(const Json& mode) {
  for (const Json& info : mode["infos"].array) {
    const std::string t = Transform(info["src_dst_placements"].string);
    const size_t arrow = t.find("->");
    const std::string from = t.substr(0, arrow), to = t.substr(arrow + 2);
    const bool into_partial = to.rfind("Partial", 0) == 0 && from != to;
    const bool from_shard = from.rfind("Shard", 0) == 0;
    if (into_partial && from_shard && to != "Partial(sum)") return true;
    if (into_partial && from.rfind("Partial", 0) == 0) return true;
  }
  return false;
}

// True when PyTorch's merged plan holds an all_gather merged over two or
// more mesh dims of size > 1.
bool MergesGatherOverTwoDims(const Json& mode, const Mesh& mesh) {
  for (const Json& info : mode["merged"].array) {
    if (info["type"].string == "_TransformInfo") continue;
    const std::string t = Transform(info["src_dst_placements"].string);
    if (t.rfind("Shard", 0) != 0 ||
        t.find("->Replicate()") == std::string::npos) {
      continue;
    }
    int big = 0;
    for (char ch : info["attr_original_mesh_dims"].string) {
      if (ch >= '0' && ch <= '9' && mesh.size(ch - '0') > 1) ++big;
    }
    if (big >= 2) return true;
  }
  return false;
}

// True when PyTorch's merged plan keeps Partial(avg) for a flattened
// reduction whose avg dims all have size 1 (no avg_scale), so that it
// averages over the whole group where the run sums (docs/PLAN_JSON.md,
// Deviations), and Reshard's plan is PyTorch's with those steps summing.
bool AveragesOverTheWholeGroup(const Comparison& c) {
  std::vector<std::string> fixed = c.want.steps;
  bool any = false;
  for (std::string& step : fixed) {
    const size_t at = step.find(" Partial(avg)->");
    if (step.rfind("F", 0) != 0 || at == std::string::npos ||
        step.find(" x") != std::string::npos) {
      continue;
    }
    step.replace(at, std::string(" Partial(avg)").size(), " Partial(sum)");
    any = true;
  }
  return any && fixed == c.got.steps && c.want.warnings == c.got.warnings &&
         c.want.error.empty() && c.got.error.empty();
}

// True when PyTorch's plan (`mode`'s infos, from the case's src) passes
// through a state holding two Partial ops, one of them max or min.
bool PassesMixedPartials(const Json& r, const Json& mode) {
  std::vector<std::string> ops;  // by mesh dim: the Partial op, or ""
  for (absl::string_view p : absl::StrSplit(r["case"]["src"].string, ',')) {
    const bool partial = absl::ConsumePrefix(&p, "P(");
    ops.push_back(partial ? std::string(p.substr(0, p.find(')'))) : "");
  }
  auto mixed = [&ops] {
    std::set<std::string> seen(ops.begin(), ops.end());
    seen.erase("");
    return seen.size() >= 2 && (seen.count("max") || seen.count("min"));
  };
  for (const Json& info : mode["infos"].array) {
    const std::string t = Transform(info["src_dst_placements"].string);
    absl::string_view to = absl::string_view(t).substr(t.find("->") + 2);
    const bool partial = absl::ConsumePrefix(&to, "Partial(");
    ops.at(info["mesh_dim"].Int()) =
        partial ? std::string(to.substr(0, to.find(')'))) : "";
    if (mixed()) return true;
  }
  return false;
}

// Reshard refused: right only where PyTorch refuses too, or plans what its
// executor cannot run (torch_greedy says so, naming PyTorch's refusal).
Comparison Refused(const Json& r, PlannerKind planner, absl::Status status,
                   Comparison c) {
  c.got.error = std::string(status.message());
  const std::string key = ModeKey(planner);
  if (r.Has(key + "_error")) return c;
  const bool names_refusal =
      status.code() == absl::StatusCode::kFailedPrecondition &&
      (c.got.error.find("greedy planner plans it, but its executor refuses") !=
           std::string::npos ||
       c.got.error.find("but DTensor.redistribute refuses it") !=
           std::string::npos);
  if (planner == PlannerKind::kTorchGreedy && names_refusal &&
      PlansUnrunnableTransform(r[key])) {
    c.deviation = Deviation::kUnrunnable;
    return c;
  }
  const bool names_mix =
      status.code() == absl::StatusCode::kFailedPrecondition &&
      c.got.error.find("which mixes Partial ops other than sum/avg") !=
          std::string::npos;
  if (names_mix && PassesMixedPartials(r, r[key])) {
    c.deviation = Deviation::kMixedPartials;
    return c;
  }
  c.deviation = Deviation::kUnexplained;
  c.detail = absl::StrCat("Reshard refused: ", status.ToString());
  return c;
}

// Checks what every torch plan must hold, whatever PyTorch answered.
std::string PlanDefect(const Mesh& mesh, const PlanRequest& request,
                       const Plan& plan, PlannerKind planner) {
  if (absl::Status s = CheckPlan(mesh, plan); !s.ok()) {
    return absl::StrCat("the simulator refuses the plan: ", s.ToString());
  }
  // PyTorch plans non-default shard orders with its graph planner.
  const bool default_order =
      request.src.HasDefaultOrder() && request.dst.HasDefaultOrder();
  if (plan.planner != (default_order ? planner : PlannerKind::kTorchGraph)) {
    return absl::StrCat("planned by ", PlannerName(plan.planner));
  }
  const std::string version =
      absl::StrCat("\"torch_version\":\"", kTorchVersion, "\"");
  if (PlanJson(mesh, plan).find(version) == std::string::npos) {
    return absl::StrCat("plan JSON lacks ", version);
  }
  return "";
}

}  // namespace

std::string DeviationName(Deviation d) {
  switch (d) {
    case Deviation::kNone:
      return "equal";
    case Deviation::kUnrunnable:
      return "unrunnable";
    case Deviation::kUnevenMergedGather:
      return "uneven merged all_gather";
    case Deviation::kMixedPartials:
      return "mixed partials";
    case Deviation::kAvgOverMergedGroup:
      return "avg over a merged group";
    case Deviation::kUnexplained:
      break;
  }
  return "unexplained";
}

std::string ModeName(PlannerKind planner, bool merge) {
  return absl::StrCat(PlannerName(planner), merge ? "+merge" : "");
}

Answer RecordedAnswer(const Json& r, PlannerKind planner, bool merge) {
  Answer a;
  const std::string key = ModeKey(planner);
  if (r.Has(key + "_error")) {
    a.error = r[key + "_error"].string;
    return a;
  }
  const Json& mode = r[key];
  for (const Json& info : mode[merge ? "merged" : "infos"].array) {
    a.steps.push_back(RecordedStep(info));
  }
  if (merge) {
    const std::vector<std::string> names =
        r["case"]["mesh"]["dim_names"].Strings();
    for (const Json& w : mode["warnings"].array) {
      a.warnings.insert(RecordedWarning(w.string, names));
    }
  }
  return a;
}

absl::StatusOr<RecordedRequest> RequestOf(const Json& r,
                                          const PlanOptions& options) {
  const Json& m = r["case"]["mesh"];
  MeshSpec spec;
  spec.shape = m["shape"].Ints();
  spec.dim_names = m["dim_names"].Strings();
  for (const Json& g : r["flattened_done"].array) {
    spec.flattened.push_back(g.Strings());
  }
  absl::StatusOr<Mesh> mesh = Mesh::Create(spec);
  if (!mesh.ok()) return mesh.status();
  const Json& t = r["case"]["tensor"];
  absl::StatusOr<PlanRequest> request = ParsePlanRequest(
      *mesh, t["shape"].Ints(), t["dtype"].string, r["case"]["src"].string,
      r["case"]["dst"].string, options);
  if (!request.ok()) return request.status();
  return RecordedRequest{*std::move(mesh), *std::move(request)};
}

Comparison CompareMode(const Json& r, PlannerKind planner, bool merge) {
  Comparison c;
  c.want = RecordedAnswer(r, planner, merge);
  absl::StatusOr<RecordedRequest> asked =
      RequestOf(r, {planner, CostModelKind::kTorch, merge, 1});
  if (!asked.ok()) return Refused(r, planner, asked.status(), std::move(c));
  const Mesh& mesh = asked->mesh;
  absl::StatusOr<Plan> plan = MakePlan(mesh, asked->request);
  if (!plan.ok()) return Refused(r, planner, plan.status(), std::move(c));
  const std::string key = ModeKey(planner);
  c.got =
      ReshardAnswer(*plan, mesh, merge && r.Has(key) && NamesGroups(r[key]));
  c.detail = PlanDefect(mesh, asked->request, *plan, planner);
  if (!c.detail.empty() || !c.want.error.empty()) {
    if (c.detail.empty()) c.detail = "PyTorch refused: " + c.want.error;
    c.deviation = Deviation::kUnexplained;
    return c;
  }
  if (c.got == c.want) {
    return c;
  }
  if (merge && AveragesOverTheWholeGroup(c)) {
    c.deviation = Deviation::kAvgOverMergedGroup;
    return c;
  }
  const Json& mode = r[key];
  if (plan->planner == PlannerKind::kTorchGraph &&
      PassesMixedPartials(r, mode)) {
    c.deviation = Deviation::kMixedPartials;
    return c;
  }
  // The only other deviation: an uneven merged all_gather refused.
  const bool refused_uneven =
      merge && c.got.warnings.count("uneven_merge_refused");
  c.deviation = refused_uneven && MergesGatherOverTwoDims(mode, mesh)
                    ? Deviation::kUnevenMergedGather
                    : Deviation::kUnexplained;
  return c;
}

}  // namespace reshard::testing
