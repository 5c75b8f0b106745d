// ReadPlanJson: every plan of every planner reads back from its own JSON
// (docs/DESIGN.md §4) as the same steps, and prints as the same JSON again
// (totals, planning figures and warnings kept); null fields are accepted; bad
// or inconsistent files are INVALID_ARGUMENT naming the field.
#include "planner/format/plan_json_reader.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "tests/planner/random_cases.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

TEST(PlanJsonReaderTest, EveryPlanReadsBackFromItsJson) {
  std::mt19937_64 rng(99);
  int read = 0;
  for (int i = 0; i < testing::ScaledCases(500); ++i) {
    const testing::RandomCase c = testing::MakeRandomCase(rng);
    PlanOptions options;
    options.planner = static_cast<PlannerKind>(i % 3);
    options.merge = i % 2 == 0;
    absl::StatusOr<Plan> plan =
        MakePlan(c.mesh, PlanRequest{c.tensor, c.src, c.dst, options});
    if (!plan.ok()) continue;
    absl::StatusOr<PlanFile> back = ReadPlanJson(PlanJson(c.mesh, *plan));
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << PlanJson(c.mesh, *plan);
    EXPECT_EQ(back->mesh.CanonicalText(true), c.mesh.CanonicalText(true));
    EXPECT_EQ(back->plan.tensor, plan->tensor);
    EXPECT_EQ(back->plan.src, plan->src);
    EXPECT_EQ(back->plan.dst, plan->dst);
    ASSERT_EQ(back->plan.steps.size(), plan->steps.size());
    for (size_t k = 0; k < plan->steps.size(); ++k) {
      EXPECT_TRUE(back->plan.steps[k].SameAction(plan->steps[k])) << k;
      EXPECT_EQ(back->plan.steps[k].bytes, plan->steps[k].bytes);
    }
    // What the maker recorded comes back unchanged: the same JSON again.
    EXPECT_EQ(PlanJson(back->mesh, back->plan), PlanJson(c.mesh, *plan));
    ++read;
  }
  EXPECT_GT(read, testing::ScaledCases(500) / 2);
}

constexpr char kMinimal[] = R"json({
  "mesh": {"shape": [2, 2], "dim_names": ["A", "B"], "flattened": null},
  "tensor": {"shape": [6, 4], "dtype": "bf16"},
  "src": "S(0),P(avg)", "dst": "R,R",
  "steps": [
    {"op": "all_reduce", "mesh_dims": [1], "reduce_op": "avg",
     "avg_divisor": null, "src_tensor_dim": null, "dst_tensor_dim": null,
     "from": "S(0),P(avg)", "to": "S(0),R", "bytes": null, "time_us": null},
    {"mesh_dims": [0], "from": "S(0),R", "to": "R,R"}]})json";

TEST(PlanJsonReaderTest, NullsAndMissingOptionalFieldsAreAccepted) {
  absl::StatusOr<PlanFile> f = ReadPlanJson(kMinimal);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->plan.steps.size(), 2u);
  EXPECT_EQ(f->plan.steps[0].op, StepOp::kAllReduce);
  EXPECT_EQ(f->plan.steps[0].reduce_op, ReduceOp::kAvg);
  EXPECT_EQ(f->plan.steps[1].op, StepOp::kAllGather);
  EXPECT_EQ(f->plan.tensor.dtype(), DType::kBFloat16);
}

// A torch plan made when the modes followed PyTorch 2.11 (or any other
// release) reads as well as one naming the pin: the version describes the
// plan, it does not change how it is read.
TEST(PlanJsonReaderTest, TorchPlansNamingAnyReleaseAreRead) {
  const Mesh mesh = testing::MakeMesh({2, 2});
  PlanOptions options;
  options.planner = PlannerKind::kTorchGreedy;
  absl::StatusOr<Plan> plan =
      testing::PlanChecked(mesh, {6, 4}, "S(0),P(sum)", "R,R", options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string json = PlanJson(mesh, *plan);
  const std::string pin =
      absl::StrCat("\"torch_version\":\"", kTorchVersion, "\"");
  const size_t at = json.find(pin);
  ASSERT_NE(at, std::string::npos) << json;
  for (const char* version : {"2.11.0", "2.9.1", "3.0.0a0"}) {
    std::string old = json;
    old.replace(at, pin.size(),
                absl::StrCat("\"torch_version\":\"", version, "\""));
    absl::StatusOr<PlanFile> back = ReadPlanJson(old);
    ASSERT_TRUE(back.ok()) << version << ": " << back.status();
    ASSERT_EQ(back->plan.steps.size(), plan->steps.size());
    for (size_t k = 0; k < plan->steps.size(); ++k) {
      EXPECT_TRUE(back->plan.steps[k].SameAction(plan->steps[k])) << k;
    }
  }
}

void ExpectError(const std::string& text, const std::string& message) {
  absl::StatusOr<PlanFile> f = ReadPlanJson(text);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(f.status().message().find(message), std::string::npos)
      << f.status();
}

TEST(PlanJsonReaderTest, ErrorsNameTheField) {
  std::string text = kMinimal;
  ExpectError("{\"mesh\": [1,", "json: ");
  ExpectError("[]", "plan: not a JSON object");
  ExpectError("{}", "plan.mesh: is required");
  std::string wrong_op = text;
  wrong_op.replace(wrong_op.find("\"all_reduce\""), 12, "\"all_gather\"");
  ExpectError(wrong_op,
              "plan.steps[0].op: \"all_gather\" but its states imply "
              "\"all_reduce\"");
  std::string bad_state = text;
  bad_state.replace(bad_state.find("\"to\": \"R,R\""), 11,
                    "\"to\": \"S(9),R\"");
  ExpectError(bad_state, "plan.steps[1].to");
  std::string bad_dtype = text;
  bad_dtype.replace(bad_dtype.find("bf16"), 4, "q8");
  ExpectError(bad_dtype, "plan.tensor.dtype: unknown dtype \"q8\"");
  std::string bad_dims = text;
  bad_dims.replace(bad_dims.find("[0]"), 3, "[7]");
  ExpectError(bad_dims, "plan.steps[1].mesh_dims");
}

}  // namespace
}  // namespace reshard
