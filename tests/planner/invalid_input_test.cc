// Proves that every invalid input to the core library is refused with
// INVALID_ARGUMENT and a message of the form `field: problem` that names the
// offending field (`mesh.dim_names[2]`, `src[1]`, `tensor.shape[0]`,
// `mesh.flattened[0][1]`, `mesh.rank_map[3]`, `src.shard_order[0]`, ...) and
// says what is wrong (STYLE.md, DESIGN §5). Covers meshes (shape, names,
// flattened groups, rank maps, links), tensors (shape, dtype), placement text
// (syntax, ranges, order suffixes, Partial mixes), explicit shard orders and
// planner options. Boundary values that are valid are checked to pass.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "planner/dist_state.h"
#include "planner/mesh.h"
#include "planner/placement.h"
#include "planner/planner.h"
#include "planner/tensor_spec.h"

namespace reshard {
namespace {

// The (2,2,2) mesh A, B, C of DESIGN §2.1.
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

constexpr Placement kS0 = Placement::Shard(0);
constexpr Placement kS1 = Placement::Shard(1);
constexpr Placement kR = Placement::Replicate();

struct InvalidCase {
  std::string name;                   // the test's name
  std::function<absl::Status()> run;  // produces the error
  std::string field;                  // the message starts with "field: "
  std::vector<std::string> problem;   // substrings of the message
};

void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.name; }

std::vector<InvalidCase> MeshCases() {
  return {
      {"MeshEmptyShape",
       [] { return CreateMesh({.shape = {}}); },
       "mesh.shape",
       {"must have >= 1 dim"}},
      {"MeshZeroSize",
       [] {
         return CreateMesh({.shape = {2, 0}});
       },
       "mesh.shape[1]",
       {"size must be >= 1", "got 0"}},
      {"MeshNegativeSize",
       [] {
         return CreateMesh({.shape = {-2, 2}});
       },
       "mesh.shape[0]",
       {"size must be >= 1", "got -2"}},
      {"MeshNineDims",
       [] { return CreateMesh({.shape = std::vector<int64_t>(9, 1)}); },
       "mesh.shape",
       {"9 dims", "at most 8"}},
      {"MeshWorldSizeOverflowsInt",
       [] {
         return CreateMesh({.shape = {2, int64_t{1} << 30}});
       },
       "mesh.shape",
       {"world size exceeds 2147483647"}},
      {"MeshWorldSizeOverflowsInt64",
       [] {
         return CreateMesh({.shape = {int64_t{1} << 40, int64_t{1} << 40}});
       },
       "mesh.shape",
       {"world size exceeds"}},
      {"MeshDimNamesCountMismatch",
       [] {
         return CreateMesh({.shape = {2, 2, 2}, .dim_names = {"A", "B"}});
       },
       "mesh.dim_names",
       {"has 2 names for a mesh of 3 dims"}},
      {"MeshDuplicateDimName",
       [] {
         return CreateMesh({.shape = {2, 2, 2}, .dim_names = {"A", "B", "B"}});
       },
       "mesh.dim_names[2]",
       {"duplicate name \"B\""}},
      {"MeshBadDimNameChars",
       [] {
         return CreateMesh({.shape = {2, 2}, .dim_names = {"A", "x-y"}});
       },
       "mesh.dim_names[1]",
       {"\"x-y\"", "letters, digits or '_'"}},
      {"MeshDimNameWithSpace",
       [] { return CreateMesh({.shape = {2}, .dim_names = {"a b"}}); },
       "mesh.dim_names[0]",
       {"\"a b\"", "letters, digits or '_'"}},
      {"MeshEmptyDimName",
       [] {
         return CreateMesh({.shape = {2, 2}, .dim_names = {"", "B"}});
       },
       "mesh.dim_names[0]",
       {"must be non-empty"}},
      {"MeshFlattenedUnknownDim",
       [] {
         MeshSpec spec = AbcSpec();
         spec.flattened = {{"A", "Z"}};
         return CreateMesh(spec);
       },
       "mesh.flattened[0][1]",
       {"unknown dim \"Z\""}},
      {"MeshFlattenedRepeatedDim",
       [] {
         MeshSpec spec = AbcSpec();
         spec.flattened = {{"A", "C"}, {"C", "C"}};
         return CreateMesh(spec);
       },
       "mesh.flattened[1][1]",
       {"dim \"C\" is repeated"}},
      {"MeshFlattenedSingleDim",
       [] {
         MeshSpec spec = AbcSpec();
         spec.flattened = {{"B"}};
         return CreateMesh(spec);
       },
       "mesh.flattened[0]",
       {"needs >= 2 dims", "got 1"}},
      {"MeshFlattenedEmpty",
       [] {
         MeshSpec spec = AbcSpec();
         spec.flattened.emplace_back();
         return CreateMesh(spec);
       },
       "mesh.flattened[0]",
       {"needs >= 2 dims", "got 0"}},
      {"MeshRankMapTooShort",
       [] {
         return CreateMesh({.shape = {2, 2}, .rank_map = {0, 1, 2}});
       },
       "mesh.rank_map",
       {"has 3 ranks for a mesh of 4 devices"}},
      {"MeshRankMapTooLong",
       [] {
         return CreateMesh({.shape = {2}, .rank_map = {0, 1, 2}});
       },
       "mesh.rank_map",
       {"has 3 ranks for a mesh of 2 devices"}},
      {"MeshRankMapDuplicate",
       [] {
         return CreateMesh({.shape = {2, 2}, .rank_map = {3, 1, 0, 1}});
       },
       "mesh.rank_map[3]",
       {"duplicate rank 1"}},
      {"MeshRankMapNegative",
       [] {
         return CreateMesh({.shape = {2, 2}, .rank_map = {0, -1, 2, 3}});
       },
       "mesh.rank_map[1]",
       {"rank -1 is out of range"}},
      {"MeshRankMapBeyondInt",
       [] {
         return CreateMesh(
             {.shape = {2}, .rank_map = {0, int64_t{2147483647} + 1}});
       },
       "mesh.rank_map[1]",
       {"rank 2147483648 is out of range"}},
      {"MeshLinkZeroBandwidth",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{.bandwidth_gbps = 0.0}, LinkParams{},
                       LinkParams{}};
         return CreateMesh(spec);
       },
       "mesh.links[0].bandwidth_gbps",
       {"must be in [1e-06, 1e+09] GB/s", "got 0"}},
      {"MeshLinkNegativeBandwidth",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{}, LinkParams{},
                       LinkParams{.bandwidth_gbps = -5.0}};
         return CreateMesh(spec);
       },
       "mesh.links[2].bandwidth_gbps",
       {"must be in [1e-06, 1e+09] GB/s", "got -5"}},
      {"MeshLinkNanBandwidth",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{},
                       LinkParams{.bandwidth_gbps =
                                      std::numeric_limits<double>::quiet_NaN()},
                       LinkParams{}};
         return CreateMesh(spec);
       },
       "mesh.links[1].bandwidth_gbps",
       {"must be in [1e-06, 1e+09] GB/s", "got nan"}},
      // Each step's time would be infinite (issue 10: `time_us: inf`, or
      // INTERNAL "optimal: no path").
      {"MeshLinkDenormalBandwidth",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{.bandwidth_gbps = 5e-324}, LinkParams{},
                       LinkParams{}};
         return CreateMesh(spec);
       },
       "mesh.links[0].bandwidth_gbps",
       {"must be in [1e-06, 1e+09] GB/s", "got 5e-324"}},
      {"MeshLinkHugeBandwidth",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{}, LinkParams{.bandwidth_gbps = 1e300},
                       LinkParams{}};
         return CreateMesh(spec);
       },
       "mesh.links[1].bandwidth_gbps",
       {"must be in [1e-06, 1e+09] GB/s", "got 1e+300"}},
      {"MeshLinkNegativeLatency",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{}, LinkParams{.latency_us = -1.0},
                       LinkParams{}};
         return CreateMesh(spec);
       },
       "mesh.links[1].latency_us",
       {"must be in [0, 1e+09] us", "got -1"}},
      {"MeshLinkHugeLatency",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{}, LinkParams{},
                       LinkParams{.latency_us = 1e300}};
         return CreateMesh(spec);
       },
       "mesh.links[2].latency_us",
       {"must be in [0, 1e+09] us", "got 1e+300"}},
      {"MeshLinkInfiniteLatency",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {
             LinkParams{.latency_us = std::numeric_limits<double>::infinity()},
             LinkParams{}, LinkParams{}};
         return CreateMesh(spec);
       },
       "mesh.links[0].latency_us",
       {"must be in [0, 1e+09] us", "got inf"}},
      {"MeshLinksCountMismatch",
       [] {
         MeshSpec spec = AbcSpec();
         spec.links = {LinkParams{}};
         return CreateMesh(spec);
       },
       "mesh.links",
       {"has 1 entries for a mesh of 3 dims"}},
  };
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

std::vector<InvalidCase> TextCases() {
  return {
      {"TextGarbage",
       [] { return ParseSrc("foo,R,R"); },
       "src[0]",
       {"cannot parse a placement at \"foo", "expected S(d), R or P(op)"}},
      {"TextDigitsOnly",
       [] { return ParseSrc("R,0,R"); },
       "src[1]",
       {"cannot parse a placement"}},
      {"TextShardDimNotInteger",
       [] { return ParseSrc("S(x),R,R"); },
       "src[0]",
       {"shard dim \"x\" is not an integer"}},
      {"TextShardDimMissing",
       [] { return ParseSrc("S(),R,R"); },
       "src[0]",
       {"shard dim \"\" is not an integer"}},
      {"TextShardWithoutParens",
       [] { return ParseSrc("R,S,R"); },
       "src[1]",
       {"Shard needs a tensor dim"}},
      {"TextUnclosedParen",
       [] { return ParseSrc("R,R,S(0"); },
       "src[2]",
       {"unclosed '('"}},
      {"TextUnknownReduceOp",
       [] { return ParseSrc("P(prod),R,R"); },
       "src[0]",
       {"unknown reduce op \"prod\"", "sum, avg, max or min"}},
      {"TextReplicateWithArgument",
       [] { return ParseSrc("R,Replicate(1),R"); },
       "src[1]",
       {"Replicate takes no arguments"}},
      {"TextTooManyPlacements",
       [] { return ParseSrc("R,R,R,R"); },
       "src",
       {"has 4 placements", "for a mesh of 3 dims"}},
      {"TextTooFewPlacements",
       [] { return ParseSrc("R,R"); },
       "src",
       {"has 2 placements", "for a mesh of 3 dims"}},
      {"TextNoPlacements",
       [] { return ParseSrc(""); },
       "src",
       {"has 0 placements", "for a mesh of 3 dims"}},
      {"TextMoreThanEightPlacements",
       [] { return ParseSrc("R,R,R,R,R,R,R,R,R"); },
       "src",
       {"more than 8 placements"}},
      {"TextSuffixOnReplicate",
       [] { return ParseSrc("R[0],R,R"); },
       "src[0]",
       {"only Shard placements take an order suffix"}},
      {"TextSuffixOnPartial",
       [] { return ParseSrc("R,P(sum)[0],R"); },
       "src[1]",
       {"only Shard placements take an order suffix"}},
      {"TextSuffixNotInteger",
       [] { return ParseSrc("S(0)[x],R,R"); },
       "src[0]",
       {"order suffix must be [k] with k >= 0"}},
      {"TextSuffixNegative",
       [] { return ParseSrc("S(0)[-1]S(0)[0]R"); },
       "src[0]",
       {"order suffix must be [k] with k >= 0"}},
      {"TextSuffixUnclosed",
       [] { return ParseSrc("R,R,S(0)[1"); },
       "src[2]",
       {"order suffix must be [k] with k >= 0"}},
      {"TextShardDimEqualsRank",
       [] { return ParseSrc("R,S(2),R"); },
       "src[1]",
       {"shard dim 2 out of range for a tensor of rank 2"}},
      {"TextShardDimBeyondRank",
       [] { return ParseSrc("R,R,Shard(dim=7)"); },
       "src[2]",
       {"shard dim 7 out of range for a tensor of rank 2"}},
      {"TextShardDimBelowMinusRank",
       [] { return ParseSrc("S(-3),R,R"); },
       "src[0]",
       {"shard dim -3 out of range for a tensor of rank 2"}},
      {"TextDuplicateSuffix",
       [] { return ParseSrc("S(0)[0]S(0)[0]R"); },
       "src[1]",
       {"order suffix [0] of S(0) must be a distinct index in [0, 2)"}},
      {"TextSuffixOutOfRange",
       [] { return ParseSrc("S(0)[2]S(0)[0]R"); },
       "src[0]",
       {"order suffix [2] of S(0) must be a distinct index in [0, 2)"}},
      {"TextSuffixOnSingleShardOutOfRange",
       [] { return ParseSrc("S(0)[1],R,R"); },
       "src[0]",
       {"order suffix [1] of S(0) must be a distinct index in [0, 1)"}},
      {"TextSuffixOnOnlyOneOfTwo",
       [] { return ParseSrc("S(0)[1]S(0)R"); },
       "src",
       {"tensor dim 0 has order suffixes on some of its mesh dims but not "
        "all"}},
      {"TextMixedPartialMaxSum",
       [] { return ParseSrc("P(max),P(sum),R"); },
       "src[1]",
       {"P(sum) mixed with P(max)", "only sum and avg partials may be mixed"}},
      {"TextMixedPartialAvgMin",
       [] { return ParseSrc("P(avg),R,P(min)"); },
       "src[2]",
       {"P(min) mixed with P(avg)"}},
      {"TextMixedPartialAfterSumAvg",
       [] { return ParseSrc("P(sum),P(avg),P(max)"); },
       "src[2]",
       {"P(max) mixed with P(avg)"}},
      {"DstTooFewPlacements",
       [] { return ParseDst("R,R"); },
       "dst",
       {"has 2 placements", "for a mesh of 3 dims"}},
      {"DstShardDimOutOfRange",
       [] { return ParseDst("S(5),R,R"); },
       "dst[0]",
       {"shard dim 5 out of range for a tensor of rank 2"}},
      {"DstGarbage",
       [] { return ParseDst("R,R,X(1)"); },
       "dst[2]",
       {"cannot parse a placement"}},
  };
}

std::vector<InvalidCase> ShardOrderCases() {
  return {
      {"OrderListsReplicateDim",
       [] {
         return CreateState({kS0, kS0, kR}, {{0, {0, 2}}});
       },
       "src.shard_order[0]",
       {"mesh dim 2 does not hold S(0)"}},
      {"OrderListsDimOfOtherTensorDim",
       [] {
         return CreateState({kS0, kS1, kR}, {{0, {0}}, {1, {0}}});
       },
       "src.shard_order[1]",
       {"mesh dim 0 does not hold S(1)"}},
      {"OrderListsMeshDimOutOfRange",
       [] {
         return CreateState({kS0, kS0, kR}, {{0, {0, 1, 3}}});
       },
       "src.shard_order[0]",
       {"mesh dim 3 does not hold S(0)"}},
      {"OrderMissesShardedMeshDim",
       [] {
         return CreateState({kS0, kS0, kR}, {{0, {0}}});
       },
       "src.shard_order",
       {"mesh dim 1 holds S(0) but is not listed"}},
      {"OrderMissesShardedTensorDim",
       [] {
         return CreateState({kS0, kR, kS1}, {{0, {0}}});
       },
       "src.shard_order",
       {"mesh dim 2 holds S(1) but is not listed"}},
      {"OrderListsMeshDimTwice",
       [] {
         return CreateState({kS0, kS0, kR}, {{0, {1, 1}}});
       },
       "src.shard_order[0]",
       {"mesh dim 1 is listed twice"}},
      {"OrderTensorDimsDecreasing",
       [] {
         return CreateState({kS0, kS1, kR}, {{1, {1}}, {0, {0}}});
       },
       "src.shard_order[1]",
       {"tensor dims must be strictly increasing"}},
      {"OrderTensorDimRepeated",
       [] {
         return CreateState({kS0, kS0, kR}, {{0, {0}}, {0, {1}}});
       },
       "src.shard_order[1]",
       {"tensor dims must be strictly increasing"}},
      {"OrderEmptyMeshDims",
       [] {
         return CreateState({kS0, kS0, kR}, {{0, {}}});
       },
       "src.shard_order[0]",
       {"mesh_dims must not be empty"}},
      {"StateNoPlacements",
       [] { return CreateState({}, {}); },
       "src",
       {"needs 1 to 8 placements", "got 0"}},
      {"StateNinePlacements",
       [] { return CreateState(std::vector<Placement>(9, kR), {}); },
       "src",
       {"needs 1 to 8 placements", "got 9"}},
      {"StateShardDimOutOfRange",
       [] {
         return CreateState({kR, Placement::Shard(2)}, {});
       },
       "src[1]",
       {"shard dim 2 out of range for a tensor of rank 2"}},
      {"StateUnnormalizedNegativeShardDim",
       [] {
         return CreateState({Placement::Shard(-1), kR}, {});
       },
       "src[0]",
       {"shard dim -1 out of range"}},
      {"StateMixedPartials",
       [] {
         return CreateState({Placement::Partial(ReduceOp::kMin),
                             Placement::Partial(ReduceOp::kSum)},
                            {});
       },
       "src[1]",
       {"P(sum) mixed with P(min)"}},
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
      // A padded all_gather on 2^31 - 1 ranks would count 2^93 bytes: the
      // plan came back with negative bytes and time (issue 10's search
      // for non-finite costs).
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

std::vector<InvalidCase> AllCases() {
  std::vector<InvalidCase> all;
  for (auto cases : {MeshCases(), TensorCases(), TextCases(), ShardOrderCases(),
                     PlanCases()}) {
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
  // Every dtype spelling of DESIGN §4.
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
// send makes a cost inf or NaN, or the optimal search run dry (issue 10:
// bandwidth 5e-324 gave `time_us: inf` or INTERNAL "optimal: no path").
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
