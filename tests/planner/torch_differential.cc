// The differential check: a record of the installed PyTorch's own answers
// (tests/python/torch_planner_record.py) against Reshard's torch_greedy and
// torch_graph, with and without the merge pass, step for step and warning
// code for warning code. Only docs/PLAN_JSON.md's listed deviations pass.
//
//   torch_differential RECORD.jsonl [--disagreements OUT.jsonl]
//
// Prints the release the modes follow ("torch_version X.Y.Z"), a tally per
// mode; writes each disagreeing record's line to OUT, to
// keep as a case (tests/data/torch_kept_cases.jsonl). Exit 1 on any
// disagreement, 2 on bad arguments or an unreadable record.
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "tests/planner/torch_record.h"

namespace reshard::testing {
namespace {

struct Tally {
  int total = 0;
  std::map<Deviation, int> by_deviation;
};

void PrintDisagreement(int64_t id, const std::string& mode,
                       const Comparison& c) {
  std::cout << "DISAGREES: case " << id << " " << mode << ": " << c.detail
            << "\n  PyTorch: "
            << (c.want.error.empty() ? absl::StrJoin(c.want.steps, " | ")
                                     : "error " + c.want.error)
            << " {" << absl::StrJoin(c.want.warnings, ",") << "}"
            << "\n  Reshard: "
            << (c.got.error.empty() ? absl::StrJoin(c.got.steps, " | ")
                                    : "error " + c.got.error)
            << " {" << absl::StrJoin(c.got.warnings, ",") << "}\n";
}

// Compares one record in every mode; true when all agree or deviate as
// listed.
bool CheckRecord(const Json& r, std::map<std::string, Tally>& tallies) {
  bool agrees = true;
  for (PlannerKind planner :
       {PlannerKind::kTorchGreedy, PlannerKind::kTorchGraph}) {
    for (bool merge : {false, true}) {
      const std::string mode = ModeName(planner, merge);
      const Comparison c = CompareMode(r, planner, merge);
      Tally& tally = tallies[mode];
      ++tally.total;
      ++tally.by_deviation[c.deviation];
      if (c.deviation == Deviation::kUnexplained) {
        PrintDisagreement(r["i"].Int(), mode, c);
        agrees = false;
      }
    }
  }
  return agrees;
}

int Run(const std::string& path, const std::string& disagreements_path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "torch_differential: cannot read " << path << "\n";
    return 2;
  }
  std::ofstream kept;
  if (!disagreements_path.empty()) kept.open(disagreements_path);
  std::cout << "torch_version " << kTorchVersion << "\n";
  std::map<std::string, Tally> tallies;
  int records = 0, disagreeing = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++records;
    if (!CheckRecord(Json::Parse(line), tallies)) {
      ++disagreeing;
      if (kept.is_open()) kept << line << "\n";
    }
  }
  for (const auto& [mode, tally] : tallies) {
    std::cout << mode << ":";
    for (const auto& [d, n] : tally.by_deviation) {
      std::cout << " " << DeviationName(d) << " " << n;
    }
    std::cout << " (of " << tally.total << ")\n";
  }
  std::cout << records << " requests, " << disagreeing
            << " with an unlisted disagreement\n";
  if (records == 0) return 2;
  return disagreeing == 0 ? 0 : 1;
}

}  // namespace
}  // namespace reshard::testing

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--disagreements")) {
    std::cerr << "usage: torch_differential RECORD.jsonl "
                 "[--disagreements OUT.jsonl]\n";
    return 2;
  }
  return reshard::testing::Run(argv[1], argc == 4 ? argv[3] : "");
}
