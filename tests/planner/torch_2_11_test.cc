// PyTorch 2.11.0's own answers for 400 random requests
// (tests/data/torch_2_11_dev.jsonl: its planners' transform infos, its merge
// pass's output and warnings, recorded with its code on CPU, a fake process
// group, rank 0): torch_greedy and torch_graph, with and without --merge,
// equal them step for step (mesh dims, placements, order, merged groups and
// avg scales) and in warning codes, except the deviations listed per case
// below, each for its reason (docs/PLAN_JSON.md, "PyTorch 2.11").
//
// PyTorch reads its devices per host from the device count, 1 on CPU: the
// cases plan with devices_per_host 1.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "planner/plan_check.h"
#include "planner/plan_format.h"
#include "planner/planner.h"
#include "tests/json_lite.h"

namespace reshard {
namespace {

using testing::Json;

// Why Reshard's answer differs from PyTorch 2.11's for a case.
enum class Deviation {
  kNone,
  // 2.11's greedy plan holds Shard -> Partial or Partial -> another
  // Partial: its executor refuses to run it, so torch_greedy refuses.
  kUnrunnable,
  // 2.11 merges an all_gather over >= 2 dims of size > 1 on extents that
  // do not split evenly and gives wrong data: Reshard refuses that merge.
  kUnevenMergedGather,
};

// The recorded cases (field `i`) of each deviation. kUnrunnable: greedy
// with and without the merge pass; kUnevenMergedGather: by mode.
const std::set<int64_t> kUnrunnableGreedy = {
    15,  18,  19,  27,  36,  45,  52,  63,  74,  77,  86,  91,  95,
    97,  107, 146, 153, 154, 156, 164, 167, 173, 174, 176, 181, 185,
    186, 209, 210, 211, 214, 232, 244, 247, 248, 256, 268, 276, 299,
    305, 306, 343, 346, 357, 364, 369, 370, 373, 374, 380, 384, 396};
const std::set<int64_t> kUnevenGreedyMerge = {41, 118, 193, 229, 314, 330, 356};
const std::set<int64_t> kUnevenGraphMerge = {
    18, 41, 118, 155, 181, 193, 215, 223, 229, 269, 291, 314, 330, 356, 380};

std::vector<Json> LoadCases() {
  return testing::LoadJsonLines(std::string(RESHARD_TEST_DATA) +
                                "/torch_2_11_dev.jsonl");
}

Mesh CaseMesh(const Json& c) {
  const Json& m = c["case"]["mesh"];
  MeshSpec spec;
  spec.shape = m["shape"].Ints();
  spec.dim_names = m["dim_names"].Strings();
  for (const Json& g : c["flattened_done"].array) {
    spec.flattened.push_back(g.Strings());
  }
  absl::StatusOr<Mesh> mesh = Mesh::Create(spec);
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

// "(Shard(dim=0), Replicate())" -> "Shard(dim=0)->Replicate()".
std::string Transform(const std::string& pair) {
  absl::string_view s = pair;
  absl::ConsumePrefix(&s, "(");
  absl::ConsumeSuffix(&s, ")");
  const std::vector<std::string> parts = absl::StrSplit(s, ", ");
  return absl::StrCat(parts.at(0), "->", parts.at(1));
}

// One recorded transform info as text: "T1 Shard(dim=0)->Replicate()", or
// for a merged one "F0,1 Partial(sum)->Replicate() x4" (x: its avg scale).
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
  return absl::StrCat("F", dims, " ",
                      Transform(info["src_dst_placements"].string),
                      scale == "None" ? "" : absl::StrCat(" x", scale));
}

// Reshard's step in the same text. A merged reduction with avg dims of size
// > 1 reduces as a sum and scales, as PyTorch's merged step does.
std::string ReshardStep(const Mesh& mesh, const Step& s) {
  const Placement from = s.from.placement(s.group[0]);
  const Placement to = s.to.placement(s.group[0]);
  if (s.group.size() == 1) {
    return absl::StrCat("T", s.group[0], " ", from.ToRepr(), "->", to.ToRepr());
  }
  int64_t scale = 1;
  for (int m : s.group) {
    if (s.from.placement(m) == Placement::Partial(ReduceOp::kAvg)) {
      scale *= mesh.size(m);
    }
  }
  const std::string src =
      scale > 1 ? "Partial(sum)" : s.from.placement(s.group[0]).ToRepr();
  return absl::StrCat("F", absl::StrJoin(s.group, ","), " ", src, "->",
                      to.ToRepr(), scale > 1 ? absl::StrCat(" x", scale) : "");
}

// A recorded warning as "code" or "code:dims" (missing groups name dims).
std::string RecordedWarning(const Json& w, const Mesh& mesh) {
  const std::string& text = w.string;
  const size_t at = text.find("flatten mesh dimensions [");
  if (at != std::string::npos) {
    const std::string list =
        text.substr(at, text.find(']', at) - at);  // ["A", "B"
    std::vector<int> dims;
    for (int d = 0; d < mesh.ndim(); ++d) {
      if (list.find(absl::StrCat("\"", mesh.dim_names()[d], "\"")) !=
          std::string::npos) {
        dims.push_back(d);
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

struct Answer {
  std::vector<std::string> steps;
  std::set<std::string> warnings;
};

Answer Recorded(const Json& mode, bool merge, const Mesh& mesh) {
  Answer a;
  for (const Json& info : mode[merge ? "merged" : "infos"].array) {
    a.steps.push_back(RecordedStep(info));
  }
  if (merge) {
    for (const Json& w : mode["warnings"].array) {
      a.warnings.insert(RecordedWarning(w, mesh));
    }
  }
  return a;
}

Answer Reshard(const Plan& plan, const Mesh& mesh) {
  Answer a;
  for (const Step& s : plan.steps) a.steps.push_back(ReshardStep(mesh, s));
  for (const Warning& w : plan.warnings) {
    a.warnings.insert(ReshardWarning(w, mesh));
  }
  return a;
}

// True when 2.11's plan (`mode`'s infos) holds a transform its executor
// refuses: Shard -> Partial, or Partial -> another Partial.
bool PlansUnrunnableTransform(const Json& mode) {
  for (const Json& info : mode["infos"].array) {
    const std::string t = Transform(info["src_dst_placements"].string);
    const size_t arrow = t.find("->");
    const std::string from = t.substr(0, arrow), to = t.substr(arrow + 2);
    if (to.rfind("Partial", 0) == 0 && from != to &&
        (from.rfind("Shard", 0) == 0 || from.rfind("Partial", 0) == 0)) {
      return true;
    }
  }
  return false;
}

// True when 2.11's merged plan holds an all_gather merged over two or more
// mesh dims of size > 1.
bool MergesGatherOverTwoDims(const Json& mode, const Mesh& mesh) {
  for (const Json& info : mode["merged"].array) {
    if (info["type"].string == "_TransformInfo") continue;
    const std::string t = Transform(info["src_dst_placements"].string);
    if (t.rfind("Shard", 0) != 0 ||
        t.find("->Replicate()") == std::string::npos)
      continue;
    int big = 0;
    for (char ch : info["attr_original_mesh_dims"].string) {
      if (ch >= '0' && ch <= '9' && mesh.size(ch - '0') > 1) ++big;
    }
    if (big >= 2) return true;
  }
  return false;
}

// How the modes fared over all cases, for the summary line.
struct Tally {
  int equal = 0;
  std::map<Deviation, std::set<int64_t>> deviations;
};

// Plans case `c` in one mode and checks it against the record; returns the
// deviation it shows.
Deviation CheckMode(const Json& c, PlannerKind planner, bool merge) {
  const Mesh mesh = CaseMesh(c);
  const Json& t = c["case"]["tensor"];
  PlanOptions options{planner, CostModelKind::kTorch, merge, 1};
  absl::StatusOr<PlanRequest> request = ParsePlanRequest(
      mesh, t["shape"].Ints(), t["dtype"].string, c["case"]["src"].string,
      c["case"]["dst"].string, options);
  EXPECT_TRUE(request.ok()) << request.status();
  if (!request.ok()) return Deviation::kNone;
  absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
  const Json& mode =
      c[planner == PlannerKind::kTorchGreedy ? "greedy" : "graph"];
  const Answer want = Recorded(mode, merge, mesh);
  if (!plan.ok()) {
    EXPECT_TRUE(PlansUnrunnableTransform(mode)) << plan.status();
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(
        plan.status().message().find("PyTorch 2.11's greedy planner plans it"),
        std::string::npos)
        << plan.status();
    EXPECT_NE(plan.status().message().find("but its executor refuses"),
              std::string::npos)
        << plan.status();
    return Deviation::kUnrunnable;
  }
  EXPECT_TRUE(CheckPlan(mesh, *plan).ok());
  // PyTorch 2.11 plans non-default shard orders with its graph planner.
  const bool default_order =
      request->src.HasDefaultOrder() && request->dst.HasDefaultOrder();
  EXPECT_EQ(plan->planner, default_order ? planner : PlannerKind::kTorchGraph);
  EXPECT_NE(PlanJson(mesh, *plan).find("\"torch_version\":\"2.11.0\""),
            std::string::npos);
  const Answer got = Reshard(*plan, mesh);
  if (got.steps == want.steps && got.warnings == want.warnings) {
    return Deviation::kNone;
  }
  // The only other deviation: an uneven merged all_gather refused.
  EXPECT_TRUE(MergesGatherOverTwoDims(mode, mesh));
  EXPECT_TRUE(merge) << absl::StrJoin(got.steps, " | ") << "\nwant "
                     << absl::StrJoin(want.steps, " | ");
  EXPECT_TRUE(got.warnings.count("uneven_merge_refused"))
      << absl::StrJoin(got.steps, " | ") << "\nwant "
      << absl::StrJoin(want.steps, " | ");
  return Deviation::kUnevenMergedGather;
}

TEST(Torch211Test, FileHasAllCases) { EXPECT_EQ(LoadCases().size(), 400u); }

TEST(Torch211Test, ModesReproducePyTorch211ExceptListedDeviations) {
  const std::vector<Json> cases = LoadCases();
  std::map<std::string, Tally> tallies;
  for (const Json& c : cases) {
    const int64_t id = c["i"].Int();
    for (PlannerKind planner :
         {PlannerKind::kTorchGreedy, PlannerKind::kTorchGraph}) {
      for (bool merge : {false, true}) {
        SCOPED_TRACE(absl::StrCat("case ", id, " ", PlannerName(planner),
                                  merge ? "+merge" : ""));
        const Deviation d = CheckMode(c, planner, merge);
        Tally& tally =
            tallies[absl::StrCat(PlannerName(planner), merge ? "+merge" : "")];
        if (d == Deviation::kNone) {
          ++tally.equal;
        } else {
          tally.deviations[d].insert(id);
        }
      }
    }
  }
  const std::map<Deviation, std::set<int64_t>> greedy = {
      {Deviation::kUnrunnable, kUnrunnableGreedy}};
  std::map<Deviation, std::set<int64_t>> greedy_merge = greedy;
  greedy_merge[Deviation::kUnevenMergedGather] = kUnevenGreedyMerge;
  EXPECT_EQ(tallies["torch_greedy"].deviations, greedy);
  EXPECT_EQ(tallies["torch_greedy+merge"].deviations, greedy_merge);
  EXPECT_TRUE(tallies["torch_graph"].deviations.empty());
  EXPECT_EQ(tallies["torch_graph+merge"].deviations,
            (std::map<Deviation, std::set<int64_t>>{
                {Deviation::kUnevenMergedGather, kUnevenGraphMerge}}));
  for (const auto& [mode, tally] : tallies) {
    std::cout << mode << ": " << tally.equal << "/" << cases.size()
              << " equal to PyTorch 2.11";
    for (const auto& [d, ids] : tally.deviations) {
      std::cout << "; "
                << (d == Deviation::kUnrunnable ? "unrunnable "
                                                : "uneven merged all_gather ")
                << ids.size() << " (" << absl::StrJoin(ids, ",") << ")";
    }
    std::cout << "\n";
  }
}

}  // namespace
}  // namespace reshard
