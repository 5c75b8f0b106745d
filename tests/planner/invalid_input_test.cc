// Proves that every invalid input to the core library is refused with
// INVALID_ARGUMENT and a message of the form `field: problem` that names the
// offending field (`mesh.dim_names[2]`, `src[1]`, `tensor.shape[0]`,
// `mesh.flattened[0][1]`, `mesh.rank_map[3]`, `src.shard_order[0]`, ...) and
// says what is wrong (docs/DESIGN.md §5). Covers meshes (shape, names,
// flattened groups, rank maps, links), tensors (shape, dtype), placement text
// (syntax, ranges, order suffixes, Partial mixes), explicit shard orders and
// planner options. Boundary values that are valid are checked to pass.
// The mesh, placement-text and shard-order cases are data
// (tests/data/invalid_input_cases.jsonl); tensor and plan cases are code.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/placement.h"
#include "planner/core/tensor_spec.h"
#include "planner/search/planner.h"
#include "tests/json_lite.h"

namespace reshard {
namespace {

using testing::Json;

// The (2,2,2) mesh A, B, C of docs/DESIGN.md §2.1.
MeshSpec AbcSpec() {
  return {.shape = {2, 2, 2}, .dim_names = {"A", "B", "C"}};
}

const Mesh& AbcMesh() {
  static const Mesh* const mesh = new Mesh(Mesh::Create(AbcSpec()).value());
  return *mesh;
}

absl::Status CreateMesh(MeshSpec spec) {
  return Mesh::Create(std::move(spec)).status();
}

// A plan request on the ABC mesh; the tensor is (8, 8) float32 unless given.
absl::Status ParseRequest(std::vector<int64_t> shape, absl::string_view dtype,
                          absl::string_view src, absl::string_view dst) {
  return ParsePlanRequest(AbcMesh(), std::move(shape), dtype, src, dst,
                          PlanOptions{})
      .status();
}
absl::Status ParseSrc(absl::string_view src) {
  return ParseRequest({8, 8}, "float32", src, "R,R,R");
}
absl::Status ParseDst(absl::string_view dst) {
  return ParseRequest({8, 8}, "float32", "R,R,R", dst);
}
absl::Status ParseShape(std::vector<int64_t> shape) {
  return ParseRequest(std::move(shape), "float32", "R,R,R", "R,R,R");
}

// DistState::Create with an explicit order, for a tensor of rank 2.
absl::Status CreateState(std::vector<Placement> placements,
                         std::vector<ShardOrderEntry> order) {
  return DistState::Create(placements, order, /*tensor_rank=*/2, "src")
      .status();
}

// Parses `src` -> `dst` on the ABC mesh and plans it with `options`.
absl::Status PlanStatus(absl::string_view src, absl::string_view dst,
                        PlanOptions options) {
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(AbcMesh(), {8, 8}, "float32", src, dst, options);
  if (!request.ok()) {
    return absl::InternalError(
        absl::StrCat("test setup: ", request.status().ToString()));
  }
  return MakePlan(AbcMesh(), *request).status();
}

struct InvalidCase {
  std::string name;                   // the test's name
  std::function<absl::Status()> run;  // produces the error
  std::string field;                  // the message starts with "field: "
  std::vector<std::string> problem;   // substrings of the message
};

void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.name; }

// The cases of tests/data/invalid_input_cases.jsonl, one JSON object a
// line: its `name`, the `field` the message starts with, the `problem`
// substrings the message holds, and its input, by kind:
//  - `mesh`: a MeshSpec given to Mesh::Create (shape, dim_names, flattened,
//    rank_map, links; a link's bandwidth_gbps and latency_us are numbers,
//    or "nan" / "inf", which JSON cannot write as numbers);
//  - `src` or `dst`: placement text parsed on the ABC mesh (the other side
//    R,R,R);
//  - `state` and `order`: placements ("R", "S(d)" with d as written, or
//    "P(op)") and [tensor_dim, [mesh dims]] entries given to
//    DistState::Create for a tensor of rank 2.
// A `note` says why a case is there where its name does not.
std::vector<Json> LoadDataCases() {
  return testing::LoadJsonLines(std::string(RESHARD_TEST_DATA) +
                                "/invalid_input_cases.jsonl");
}

// A JSON number, or one of "nan", "inf", "-inf".
double Number(const Json& j) {
  return j.kind == Json::Kind::kString ? std::strtod(j.string.c_str(), nullptr)
                                       : j.number;
}

MeshSpec MeshSpecOf(const Json& m) {
  MeshSpec spec;
  spec.shape = m["shape"].Ints();
  if (m.Has("dim_names")) spec.dim_names = m["dim_names"].Strings();
  if (m.Has("rank_map")) spec.rank_map = m["rank_map"].Ints();
  if (m.Has("flattened")) {
    for (const Json& g : m["flattened"].array) {
      spec.flattened.push_back(g.Strings());
    }
  }
  if (m.Has("links")) {
    for (const Json& l : m["links"].array) {
      LinkParams link;
      if (l.Has("bandwidth_gbps")) {
        link.bandwidth_gbps = Number(l["bandwidth_gbps"]);
      }
      if (l.Has("latency_us")) link.latency_us = Number(l["latency_us"]);
      spec.links.push_back(link);
    }
  }
  return spec;
}

// "R", "S(d)" (d not normalized: out-of-range dims are the point) or
// "P(op)"; INTERNAL for anything else (a mistake in the data file).
absl::StatusOr<Placement> PlacementOf(absl::string_view text) {
  if (text == "R") return Placement::Replicate();
  absl::string_view inner = text;
  int dim = 0;
  if (absl::ConsumePrefix(&inner, "S(") && absl::ConsumeSuffix(&inner, ")") &&
      absl::SimpleAtoi(inner, &dim)) {
    return Placement::Shard(dim);
  }
  inner = text;
  if (absl::ConsumePrefix(&inner, "P(") && absl::ConsumeSuffix(&inner, ")")) {
    if (std::optional<ReduceOp> op = ParseReduceOp(inner)) {
      return Placement::Partial(*op);
    }
  }
  return absl::InternalError(
      absl::StrCat("test data: no placement \"", text, "\""));
}

// A `state` case: its placements and explicit order, through CreateState.
absl::Status CreateStateOf(const Json& c) {
  std::vector<Placement> placements;
  for (const Json& p : c["state"].array) {
    absl::StatusOr<Placement> placement = PlacementOf(p.string);
    if (!placement.ok()) return placement.status();
    placements.push_back(*placement);
  }
  std::vector<ShardOrderEntry> order;
  for (const Json& e : c["order"].array) {
    ShardOrderEntry entry{static_cast<int>(e.array.at(0).Int()), {}};
    for (int64_t d : e.array.at(1).Ints()) {
      entry.mesh_dims.push_back(static_cast<int>(d));
    }
    order.push_back(std::move(entry));
  }
  return CreateState(std::move(placements), std::move(order));
}

// The call that a case's kind names, on its input.
std::function<absl::Status()> RunOf(const Json& c) {
  if (c.Has("mesh")) {
    return [spec = MeshSpecOf(c["mesh"])] { return CreateMesh(spec); };
  }
  if (c.Has("src")) return [text = c["src"].string] { return ParseSrc(text); };
  if (c.Has("dst")) return [text = c["dst"].string] { return ParseDst(text); };
  if (c.Has("state")) return [c] { return CreateStateOf(c); };
  return [] {
    return absl::InternalError(
        "test data: a case without mesh, src, dst or state");
  };
}

std::vector<InvalidCase> DataCases() {
  std::vector<InvalidCase> cases;
  for (const Json& c : LoadDataCases()) {
    cases.push_back({c["name"].string, RunOf(c), c["field"].string,
                     c["problem"].Strings()});
  }
  return cases;
}

std::vector<InvalidCase> TensorCases() {
  return {
      {"TensorUnknownDType",
       [] {
         return ParseRequest({8, 8}, "float8", "R,R,R", "R,R,R");
       },
       "tensor.dtype",
       {"unknown dtype \"float8\"", "float32"}},
      {"TensorEmptyDType",
       [] {
         return ParseRequest({8, 8}, "", "R,R,R", "R,R,R");
       },
       "tensor.dtype",
       {"unknown dtype \"\""}},
      {"TensorZeroSize",
       [] {
         return ParseShape({4, 0});
       },
       "tensor.shape[1]",
       {"size must be >= 1", "got 0"}},
      {"TensorNegativeSize",
       [] {
         return ParseShape({-3, 4});
       },
       "tensor.shape[0]",
       {"size must be >= 1", "got -3"}},
      {"TensorEmptyShape",
       [] { return ParseShape({}); },
       "tensor.shape",
       {"rank must be in [1, 64]", "got 0"}},
      {"TensorRankTooLarge",
       [] { return ParseShape(std::vector<int64_t>(65, 1)); },
       "tensor.shape",
       {"rank must be in [1, 64]", "got 65"}},
      {"TensorElementCountOverflows",
       [] {
         return ParseShape({int64_t{1} << 40, int64_t{1} << 40});
       },
       "tensor.shape",
       {"overflows int64", "dim 1"}},
      {"TensorByteSizeOverflows",
       [] {
         return TensorSpec::Create({int64_t{1} << 62}, DType::kBFloat16)
             .status();
       },
       "tensor.shape",
       {"overflows int64", "dim 0"}},
  };
}

std::vector<InvalidCase> PlanCases() {
  return {
      {"DevicesPerHostZero",
       [] {
         PlanOptions options;
         options.devices_per_host = 0;
         return PlanStatus("S(0),R,R", "R,R,R", options);
       },
       "options.devices_per_host",
       {"must be >= 1", "got 0"}},
      // A padded all_gather on 2^31 - 1 ranks would count 2^93 bytes,
      // overflowing into a plan with negative bytes and time.
      {"TensorBytesTimesRanksTooLarge",
       [] {
         const Mesh mesh = Mesh::Create({.shape = {2147483647}}).value();
         absl::StatusOr<PlanRequest> request = ParsePlanRequest(
             mesh, {1, int64_t{1} << 59}, "int64", "S(0)", "R", PlanOptions{});
         if (!request.ok()) return request.status();
         return MakePlan(mesh, *request).status();
       },
       "tensor.shape",
       {"4611686018427387904 bytes on a mesh of 2147483647 ranks",
        "above the 72057594037927936"}},
      {"StatesDoNotFitMesh",
       [] {
         PlanRequest request;
         request.tensor = TensorSpec::Create({8, 8}, DType::kFloat32).value();
         request.src = DistState::Replicated(2);
         request.dst = DistState::Replicated(2);
         return MakePlan(AbcMesh(), request).status();
       },
       "src/dst",
       {"cover 2/2 mesh dims", "the mesh has 3"}},
  };
}

// The data file's cases, then those built in code (tensor specs and plan
// options, whose inputs are not plain values).
std::vector<InvalidCase> AllCases() {
  std::vector<InvalidCase> all = DataCases();
  for (auto cases : {TensorCases(), PlanCases()}) {
    for (InvalidCase& c : cases) all.push_back(std::move(c));
  }
  return all;
}

class InvalidInputTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidInputTest, IsInvalidArgumentNamingFieldAndProblem) {
  const InvalidCase& c = GetParam();
  const absl::Status status = c.run();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), absl::StrCat(c.field, ": ")))
      << "message \"" << status.message() << "\" does not start with \""
      << c.field << ": \"";
  for (const std::string& part : c.problem) {
    EXPECT_TRUE(absl::StrContains(status.message(), part))
        << "message \"" << status.message() << "\" lacks \"" << part << "\"";
  }
}

INSTANTIATE_TEST_SUITE_P(Table, InvalidInputTest,
                         ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<InvalidCase>& info) {
                           return info.param.name;
                         });

TEST(InvalidInputTableTest, CaseNamesAreUniqueAndThereAreEnough) {
  const std::vector<InvalidCase> all = AllCases();
  EXPECT_GE(all.size(), 30u);
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_NE(all[i].name, all[j].name);
  }
}

// The data file was read whole: every kind has at least the cases it had
// when the tables moved out of the code (29 meshes, 30 placement texts, 14
// shard orders and states).
TEST(InvalidInputTableTest, TheDataFileHoldsEveryKind) {
  int meshes = 0, texts = 0, states = 0;
  for (const Json& c : LoadDataCases()) {
    meshes += c.Has("mesh");
    texts += c.Has("src") || c.Has("dst");
    states += c.Has("state");
  }
  EXPECT_GE(meshes, 29);
  EXPECT_GE(texts, 30);
  EXPECT_GE(states, 14);
}

// The largest valid values next to the invalid ones above are accepted, so
// the refusals are not an artifact of the test setup.
TEST(ValidInputTest, BoundaryValuesAreAccepted) {
  // World size exactly 2^31 - 1; 8 dims; the largest rank value.
  EXPECT_TRUE(Mesh::Create({.shape = {2147483647}}).ok());
  EXPECT_TRUE(Mesh::Create({.shape = std::vector<int64_t>(8, 2)}).ok());
  EXPECT_TRUE(Mesh::Create({.shape = {2}, .rank_map = {2147483647, 0}}).ok());
  // Any distinct non-negative ranks, not only 0..N-1.
  EXPECT_TRUE(Mesh::Create({.shape = {2, 2}, .rank_map = {9, 3, 7, 100}}).ok());
  // Names of letters, digits and '_'; flattened groups in any order.
  MeshSpec spec = {.shape = {2, 2, 2}, .dim_names = {"dp_0", "TP", "x9"}};
  spec.flattened = {{"x9", "dp_0"}, {"dp_0", "TP", "x9"}};
  spec.links = {LinkParams{.bandwidth_gbps = 1e-3, .latency_us = 0.0},
                LinkParams{}, LinkParams{.latency_us = 5.0}};
  EXPECT_TRUE(Mesh::Create(spec).ok()) << Mesh::Create(spec).status();
  // The ends of the link ranges.
  spec.links = {LinkParams{.bandwidth_gbps = kMinLinkBandwidthGBps,
                           .latency_us = kMaxLinkLatencyUs},
                LinkParams{.bandwidth_gbps = kMaxLinkBandwidthGBps},
                LinkParams{}};
  EXPECT_TRUE(Mesh::Create(spec).ok()) << Mesh::Create(spec).status();
  // The largest bfloat16 tensor whose byte size fits in int64.
  EXPECT_TRUE(
      TensorSpec::Create({(int64_t{1} << 62) - 1}, DType::kBFloat16).ok());
  // Every dtype spelling of docs/DESIGN.md §4.
  for (absl::string_view dtype :
       {"float32", "float64", "bfloat16", "float16", "int32", "int64", "f32",
        "f64", "bf16", "f16", "i32", "i64"}) {
    EXPECT_TRUE(ParseRequest({8, 8}, dtype, "S(0),R,R", "R,R,R").ok()) << dtype;
  }
  // Shard dims -rank and rank-1; a single-mesh-dim [0] suffix; sum/avg mix.
  EXPECT_TRUE(ParseSrc("S(-2),S(1),R").ok());
  EXPECT_TRUE(ParseSrc("S(0)[0],R,R").ok());
  EXPECT_TRUE(ParseSrc("P(sum),P(avg),P(sum)").ok());
}

// The ends of the accepted link ranges plan with finite costs on the
// largest tensors, with every planner and cost model: nothing a client can
// send makes a cost inf or NaN, or the optimal search run dry (a bandwidth
// of 5e-324 would give `time_us: inf` or INTERNAL "optimal: no path").
TEST(ValidInputTest, ExtremeLinksPlanWithFiniteCosts) {
  MeshSpec spec = {.shape = {2, 3, 2}, .dim_names = {"A", "B", "C"}};
  spec.flattened = {{"A", "C"}};
  spec.links = {
      LinkParams{.bandwidth_gbps = kMinLinkBandwidthGBps,
                 .latency_us = kMaxLinkLatencyUs},
      LinkParams{.bandwidth_gbps = kMaxLinkBandwidthGBps, .latency_us = 0.0},
      LinkParams{.bandwidth_gbps = kMinLinkBandwidthGBps}};
  const Mesh mesh = Mesh::Create(spec).value();
  // 12 ranks: 2^50 f32 elements is near kMaxTensorBytesTimesRanks.
  const std::vector<std::vector<int64_t>> shapes = {
      {1}, {int64_t{1} << 50}, {int64_t{1} << 25, (int64_t{1} << 25) - 3}};
  for (const std::vector<int64_t>& shape : shapes) {
    for (PlannerKind planner :
         {PlannerKind::kOptimal, PlannerKind::kTorchGreedy,
          PlannerKind::kTorchGraph}) {
      for (CostModelKind model :
           {CostModelKind::kAlphaBeta, CostModelKind::kTorch}) {
        for (auto [src, dst] : {std::pair{"P(sum),S(0),P(sum)", "R,R,R"},
                                std::pair{"S(0),R,S(0)", "R,S(0),R"}}) {
          SCOPED_TRACE(absl::StrCat(PlannerName(planner), " ",
                                    CostModelName(model), " ", src, " -> ", dst,
                                    " ", shape[0]));
          PlanOptions options{planner, model, true};
          absl::StatusOr<PlanRequest> request =
              ParsePlanRequest(mesh, shape, "f32", src, dst, options);
          ASSERT_TRUE(request.ok()) << request.status();
          absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
          ASSERT_TRUE(plan.ok()) << plan.status();
          EXPECT_TRUE(std::isfinite(plan->total_time_us));
          for (const Step& step : plan->steps) {
            EXPECT_TRUE(std::isfinite(step.time_us));
          }
          for (const Warning& w : plan->warnings) {
            EXPECT_TRUE(std::isfinite(w.saving_us));
          }
        }
      }
    }
  }
}

// At kMaxTensorBytesTimesRanks every count is still positive and exact.
TEST(ValidInputTest, LargestTensorOnTheLargestMeshCountsPositively) {
  const Mesh mesh = Mesh::Create({.shape = {2147483647}}).value();
  const int64_t elements = kMaxTensorBytesTimesRanks / 2147483647 / 8;
  absl::StatusOr<PlanRequest> request =
      ParsePlanRequest(mesh, {1, elements}, "int64", "S(0)", "R",
                       PlanOptions{PlannerKind::kTorchGreedy});
  ASSERT_TRUE(request.ok()) << request.status();
  absl::StatusOr<Plan> plan = MakePlan(mesh, *request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->steps.size(), 1u);
  // The gathered output: one padded row of `elements` per rank.
  EXPECT_EQ(plan->steps[0].bytes, int64_t{2147483647} * elements * 8);
  EXPECT_GT(plan->steps[0].time_us, 0);
  EXPECT_GT(plan->peak_bytes, plan->steps[0].bytes);
}

// torch_greedy refuses non-default orders; torch_graph, which the message
// names, plans them.
TEST(ValidInputTest, TorchGraphPlansWhatGreedyRefuses) {
  PlanOptions options;
  options.planner = PlannerKind::kTorchGraph;
  const absl::Status status = PlanStatus("S(0)[1]S(0)[0]R", "R,R,R", options);
  EXPECT_TRUE(status.ok()) << status;
  // Default orders are fine for torch_greedy.
  EXPECT_TRUE(
      PlanStatus("S(0),S(0),R", "R,R,R", PlanOptions{PlannerKind::kTorchGreedy})
          .ok());
}

}  // namespace
}  // namespace reshard
