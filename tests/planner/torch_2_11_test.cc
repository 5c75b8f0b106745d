// PyTorch 2.11.0's own answers for 400 random requests
// (tests/data/torch_2_11_dev.jsonl, recorded with its code: torch_record.h):
// torch_greedy and torch_graph, with and without --merge, equal them step
// for step and in warning codes, except
//   - the deviations docs/PLAN_JSON.md lists, each for its reason;
//   - the cases where the pinned release plans differently
//     (tests/data/torch_pin_vs_2_11.jsonl holds the pin's record of each):
//     there the modes equal the pin's answer, which differs from 2.11's.
//
// PyTorch reads its devices per host from the device count, 1 on CPU: the
// cases plan with devices_per_host 1.
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/planner/torch_record.h"

namespace reshard {
namespace {

using testing::Comparison;
using testing::Deviation;
using testing::Json;

// The recorded cases (field `i`) of each deviation from 2.11, by mode.
const std::set<int64_t> kUnrunnableGreedy = {
    15,  18,  19,  27,  45,  52,  74,  77,  86,  95,  97,  156, 167,
    173, 174, 176, 181, 185, 210, 211, 214, 232, 247, 256, 268, 276,
    299, 305, 306, 343, 346, 357, 364, 369, 370, 374, 380, 384, 396};
const std::set<int64_t> kUnevenGreedyMerge = {41, 118, 193, 229, 314, 330, 356};
const std::set<int64_t> kUnevenGraphMerge = {
    18, 41, 118, 155, 181, 193, 215, 223, 229, 269, 291, 314, 330, 356, 380};

std::vector<Json> Load(const std::string& name) {
  return testing::LoadJsonLines(std::string(RESHARD_TEST_DATA) + "/" + name);
}

std::map<int64_t, Json> PinRecords() {
  std::map<int64_t, Json> by_id;
  for (Json& r : Load("torch_pin_vs_2_11.jsonl")) {
    const int64_t id = r["i"].Int();
    by_id[id] = std::move(r);
  }
  return by_id;
}

// How the modes fared over all cases, for the summary line.
struct Tally {
  int equal_2_11 = 0;
  std::set<int64_t> pin;
  std::map<Deviation, std::set<int64_t>> deviations;
};

// Compares case `c` in one mode with 2.11's answer, or with the pin's where
// that differs, and tallies it.
void CheckMode(const Json& c, const std::map<int64_t, Json>& pin,
               PlannerKind planner, bool merge, Tally& tally) {
  const int64_t id = c["i"].Int();
  const auto listed = pin.find(id);
  const bool pin_differs =
      listed != pin.end() &&
      testing::RecordedAnswer(listed->second, planner, merge) !=
          testing::RecordedAnswer(c, planner, merge);
  const Comparison got =
      testing::CompareMode(pin_differs ? listed->second : c, planner, merge);
  EXPECT_NE(got.deviation, Deviation::kUnexplained)
      << got.detail << "\n got  " << absl::StrJoin(got.got.steps, " | ") << " "
      << got.got.error << "\n want " << absl::StrJoin(got.want.steps, " | ")
      << " " << got.want.error;
  if (pin_differs) tally.pin.insert(id);
  if (got.deviation != Deviation::kNone) {
    tally.deviations[got.deviation].insert(id);
  } else if (!pin_differs) {
    ++tally.equal_2_11;
  }
}

TEST(Torch211Test, FilesHaveAllCases) {
  EXPECT_EQ(Load("torch_2_11_dev.jsonl").size(), 400u);
  EXPECT_EQ(PinRecords().size(), 19u);
}

TEST(Torch211Test, ModesReproducePyTorch211ExceptListedDifferences) {
  const std::vector<Json> cases = Load("torch_2_11_dev.jsonl");
  const std::map<int64_t, Json> pin = PinRecords();
  std::map<std::string, Tally> tallies;
  for (const Json& c : cases) {
    for (PlannerKind planner :
         {PlannerKind::kTorchGreedy, PlannerKind::kTorchGraph}) {
      for (bool merge : {false, true}) {
        const std::string mode = testing::ModeName(planner, merge);
        SCOPED_TRACE(absl::StrCat("case ", c["i"].Int(), " ", mode));
        CheckMode(c, pin, planner, merge, tallies[mode]);
      }
    }
  }
  std::set<int64_t> pin_used;
  for (const auto& [mode, tally] : tallies) {
    pin_used.insert(tally.pin.begin(), tally.pin.end());
  }
  // Every listed case differs from 2.11 in some mode: no stale entries.
  EXPECT_EQ(pin_used.size(), pin.size());
  EXPECT_TRUE(tallies["torch_greedy"].pin.empty());
  EXPECT_EQ(tallies["torch_greedy"].deviations,
            (std::map<Deviation, std::set<int64_t>>{
                {Deviation::kUnrunnable, kUnrunnableGreedy}}));
  EXPECT_EQ(tallies["torch_greedy+merge"].deviations,
            (std::map<Deviation, std::set<int64_t>>{
                {Deviation::kUnrunnable, kUnrunnableGreedy},
                {Deviation::kUnevenMergedGather, kUnevenGreedyMerge}}));
  EXPECT_TRUE(tallies["torch_graph"].deviations.empty());
  EXPECT_EQ(tallies["torch_graph+merge"].deviations,
            (std::map<Deviation, std::set<int64_t>>{
                {Deviation::kUnevenMergedGather, kUnevenGraphMerge}}));
  for (const auto& [mode, tally] : tallies) {
    std::cout << mode << ": " << tally.equal_2_11 << "/" << cases.size()
              << " equal to PyTorch 2.11; " << tally.pin.size()
              << " where the pin differs (" << absl::StrJoin(tally.pin, ",")
              << ")";
    for (const auto& [d, ids] : tally.deviations) {
      std::cout << "; " << testing::DeviationName(d) << " " << ids.size()
                << " (" << absl::StrJoin(ids, ",") << ")";
    }
    std::cout << "\n";
  }
}

}  // namespace
}  // namespace reshard
