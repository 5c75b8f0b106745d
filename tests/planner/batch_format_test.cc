// The batch JSON of `reshardctl plan --batch --json` (its exact set of
// keys) and its table.
#include "planner/format/batch_format.h"

#include "gtest/gtest.h"
#include "planner/format/plan_format.h"
#include "planner/search/plan_cache.h"
#include "tests/json_lite.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::Json;
using testing::MakeMesh;

std::vector<std::string> Keys(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.object) keys.push_back(k);
  return keys;
}

BatchPlan MakeBatch(const Mesh& mesh) {
  std::vector<absl::StatusOr<PlanRequest>> requests;
  requests.push_back(
      ParsePlanRequest(mesh, {8, 8}, "bf16", "P(sum),R", "R,R", {}));
  requests.push_back(
      ParsePlanRequest(mesh, {8, 8}, "f32", "S(9),R", "R,R", {}));
  requests.push_back(
      ParsePlanRequest(mesh, {6, 4}, "f32", "S(0),R", "R,S(1)", {}));
  PlanCache cache(8);
  return *PlanBatch(mesh, requests, {}, cache);
}

TEST(BatchFormatTest, JsonHasExactlyTheIssuesKeys) {
  const Mesh mesh = MakeMesh({2, 2});
  const BatchPlan batch = MakeBatch(mesh);
  const Json j = Json::Parse(BatchJson(mesh, batch));
  EXPECT_EQ(Keys(j),
            (std::vector<std::string>{
                "buckets", "collectives_after", "collectives_before",
                "peak_bytes", "plans", "time_us_after", "time_us_before"}));
  ASSERT_EQ(j["plans"].array.size(), 3u);
  // A planned item is its plan JSON (docs/DESIGN.md §4), byte for byte.
  EXPECT_EQ(Keys(j["plans"].array[0]),
            Keys(Json::Parse(PlanJson(mesh, *batch.plans[0]))));
  const Json& error = j["plans"].array[1];
  EXPECT_EQ(Keys(error), std::vector<std::string>{"error"});
  EXPECT_EQ(error["error"]["code"].string, "INVALID_ARGUMENT");
  EXPECT_EQ(error["error"]["message"].string.substr(0, 16), "items[1].src[0]:");
  ASSERT_EQ(j["buckets"].array.size(), 2u);
  const Json& reduce = j["buckets"].array[0];
  EXPECT_EQ(Keys(reduce),
            (std::vector<std::string>{"avg_divisor", "bytes", "group",
                                      "members", "op", "reduce_op"}));
  EXPECT_EQ(reduce["op"].string, "all_reduce");
  EXPECT_EQ(reduce["group"].string, "A");
  EXPECT_EQ(reduce["reduce_op"].string, "sum");
  EXPECT_EQ(reduce["avg_divisor"].Int(), 1);
  EXPECT_EQ(reduce["bytes"].Int(), batch.schedule.buckets[0].bytes);
  ASSERT_EQ(reduce["members"].array.size(), 1u);
  EXPECT_EQ(Keys(reduce["members"].array[0]),
            (std::vector<std::string>{"step", "tensor"}));
  const Json& gather = j["buckets"].array[1];
  EXPECT_EQ(gather["op"].string, "all_gather");
  EXPECT_EQ(gather["reduce_op"].kind, Json::Kind::kNull);
  EXPECT_EQ(gather["members"].array[0]["tensor"].Int(), 2);
  EXPECT_EQ(j["collectives_before"].Int(), 2);
  EXPECT_EQ(j["collectives_after"].Int(), 2);
  EXPECT_DOUBLE_EQ(j["time_us_before"].number, batch.schedule.time_us_before);
}

TEST(BatchFormatTest, TableNamesItemsBucketsAndTotals) {
  const Mesh mesh = MakeMesh({2, 2});
  const std::string table = BatchTable(mesh, MakeBatch(mesh), {"w", "bad"});
  EXPECT_NE(table.find("items: 3 (2 planned, 1 errors)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("bad                  error INVALID_ARGUMENT: "
                       "items[1].src[0]:"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("items[2]"), std::string::npos) << table;
  EXPECT_NE(table.find("all_reduce      A        sum"), std::string::npos)
      << table;
  EXPECT_NE(table.find("collectives: 2 tensor by tensor, 2 bucketed"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace reshard
