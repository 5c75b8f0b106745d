// The plan's text forms (planner/format/plan_format.h): in the plan JSON
// `reduce_op` is null exactly on steps that do not reduce (all_gather,
// all_to_all, chunk), and the step table's columns line up however long a
// placement is.
#include "planner/format/plan_format.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/json_lite.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::Json;
using testing::MakeMesh;
using testing::PlanChecked;

// Every step of `plan` in its JSON: op -> reduce_op as printed ("null").
std::set<std::string> OpsWithReduceOp(const Mesh& mesh, const Plan& plan) {
  const Json j = Json::Parse(PlanJson(mesh, plan));
  std::set<std::string> seen;
  for (const Json& step : j["steps"].array) {
    const Json& op = step["reduce_op"];
    seen.insert(step["op"].string + "=" +
                (op.kind == Json::Kind::kNull ? "null" : op.string));
  }
  return seen;
}

TEST(PlanFormatTest, ReduceOpIsNullOnStepsThatDoNotReduce) {
  const Mesh mesh = MakeMesh({2, 2});
  absl::StatusOr<Plan> move = PlanChecked(mesh, {8, 8}, "S(0),R", "R,S(1)", {});
  ASSERT_TRUE(move.ok()) << move.status();
  absl::StatusOr<Plan> swap = PlanChecked(mesh, {8, 8}, "S(0),R", "S(1),R", {});
  ASSERT_TRUE(swap.ok()) << swap.status();
  std::set<std::string> seen = OpsWithReduceOp(mesh, *move);
  seen.merge(OpsWithReduceOp(mesh, *swap));
  EXPECT_EQ(seen, (std::set<std::string>{"all_gather=null", "chunk=null",
                                         "all_to_all=null"}));

  absl::StatusOr<Plan> reduce =
      PlanChecked(mesh, {8, 8}, "P(max),R", "R,P(min)", {});
  ASSERT_TRUE(reduce.ok()) << reduce.status();
  EXPECT_EQ(OpsWithReduceOp(mesh, *reduce),
            (std::set<std::string>{"all_reduce=max", "partition=min"}));
}

TEST(PlanFormatTest, TableColumnsLineUpForLongPlacements) {
  const Mesh mesh = MakeMesh({2, 2, 2, 2});
  absl::StatusOr<Plan> plan =
      PlanChecked(mesh, {16, 16}, "S(0)[1],S(0)[0],S(1)[1],S(1)[0]",
                  "S(1)[1],S(1)[0],S(0)[1],S(0)[0]", {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<std::string> lines =
      absl::StrSplit(PlanTable(mesh, *plan), '\n');
  ASSERT_GE(lines.size(), plan->steps.size() + 2);
  const std::string& header = lines[1];
  const size_t from_at = header.find("from -> to");
  ASSERT_NE(from_at, std::string::npos) << header;
  const size_t bytes_end = header.find("bytes") + 5;
  size_t longest = 0;
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const Step& s = plan->steps[i];
    const std::string& row = lines[i + 2];
    const std::string cell = s.from.ToString() + " -> " + s.to.ToString();
    longest = std::max(longest, cell.size());
    EXPECT_EQ(row.size(), header.size()) << row << "\n" << header;
    EXPECT_EQ(row.substr(from_at, cell.size()), cell) << row;
    // Numbers are right-aligned under their headers.
    const std::string bytes = absl::StrCat(s.bytes);
    EXPECT_EQ(row.substr(bytes_end - bytes.size(), bytes.size()), bytes) << row;
  }
  EXPECT_GT(longest, 40u) << "the case must overflow the old 40 columns";
}

}  // namespace
}  // namespace reshard
