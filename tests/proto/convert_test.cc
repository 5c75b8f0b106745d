// Proto <-> core round trips through proto/convert.h: meshes (names, rank
// maps, flattened groups, links), plan requests (tensor, states with
// explicit shard orders, every option), plans (steps, warnings, costs) and
// statuses; and the conversion's own rules: unset fields take defaults,
// negative shard dims are normalized, unknown enum values are refused with
// the field named.
#include "proto/convert.h"

#include <string>
#include <vector>

#include "common/run_failure.h"
#include "gtest/gtest.h"
#include "planner/core/state_text.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "reshard/v1/coordinator.pb.h"

namespace reshard {
namespace {

Mesh TestMesh() {
  MeshSpec spec;
  spec.shape = {2, 2, 2};
  spec.dim_names = {"dp", "tp", "pp"};
  spec.rank_map = {7, 6, 5, 4, 3, 2, 1, 0};
  spec.flattened = {{"dp", "pp"}, {"tp", "dp"}};
  spec.links = {{}, {25.5, 1.25}, {std::nullopt, 0.1}};
  return Mesh::Create(spec).value();
}

PlanRequest TestRequest(const Mesh& mesh, PlanOptions options) {
  return ParsePlanRequest(mesh, {16, 8, 4}, "bf16", "S(0)[1],S(0)[0],P(avg)",
                          "R,S(2),S(1)", options)
      .value();
}

TEST(ConvertTest, MeshRoundTrips) {
  const Mesh mesh = TestMesh();
  absl::StatusOr<Mesh> back = proto::MeshFromProto(proto::MeshToProto(mesh));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == mesh);
  EXPECT_EQ(proto::MeshId(*back), proto::MeshId(mesh));
  // A mesh without links sends none.
  const Mesh plain = Mesh::Create({.shape = {4}}).value();
  EXPECT_EQ(proto::MeshToProto(plain).links_size(), 0);
  EXPECT_TRUE(proto::MeshFromProto(proto::MeshToProto(plain)).value() == plain);
}

TEST(ConvertTest, FlattenedGroupLinksRoundTrip) {
  const Mesh mesh = Mesh::Create({.shape = {2, 4},
                                  .dim_names = {"A", "B"},
                                  .flattened = {{"A", "B"}, {"B", "A"}},
                                  .flattened_links = {{}, {0.5, std::nullopt}}})
                        .value();
  const v1::Mesh proto = proto::MeshToProto(mesh);
  EXPECT_FALSE(proto.flattened(0).has_link());
  ASSERT_TRUE(proto.flattened(1).has_link());
  EXPECT_EQ(proto.flattened(1).link().bandwidth_gbps(), 0.5);
  EXPECT_FALSE(proto.flattened(1).link().has_latency_us());
  absl::StatusOr<Mesh> back = proto::MeshFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == mesh);
  EXPECT_EQ(proto::MeshId(*back), proto::MeshId(mesh));
}

// `mesh`, which sets one mesh-wide field, comes back from its proto with
// its id, which differs from the id of the mesh without it.
void ExpectRoundTripWithOwnId(const Mesh& mesh) {
  absl::StatusOr<Mesh> back = proto::MeshFromProto(proto::MeshToProto(mesh));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == mesh);
  EXPECT_EQ(proto::MeshId(*back), proto::MeshId(mesh));
  const Mesh plain = Mesh::Create({.shape = mesh.shape()}).value();
  EXPECT_NE(proto::MeshId(plain), proto::MeshId(mesh));
}

TEST(ConvertTest, CopyRateRoundTrips) {
  const Mesh mesh = Mesh::Create({.shape = {4}, .copy_gbps = 3.25}).value();
  const v1::Mesh proto = proto::MeshToProto(mesh);
  ASSERT_TRUE(proto.has_copy_gbps());
  EXPECT_EQ(proto.copy_gbps(), 3.25);
  EXPECT_FALSE(proto.has_base_us());
  EXPECT_FALSE(proto.has_reduce_gbps());
  ExpectRoundTripWithOwnId(mesh);
}

TEST(ConvertTest, BaseLatencyRoundTrips) {
  const Mesh mesh = Mesh::Create({.shape = {4}, .base_us = 3900}).value();
  const v1::Mesh proto = proto::MeshToProto(mesh);
  ASSERT_TRUE(proto.has_base_us());
  EXPECT_EQ(proto.base_us(), 3900);
  EXPECT_FALSE(proto.has_copy_gbps());
  ExpectRoundTripWithOwnId(mesh);
}

TEST(ConvertTest, ReductionRateRoundTrips) {
  const Mesh mesh = Mesh::Create({.shape = {4}, .reduce_gbps = 0.6}).value();
  const v1::Mesh proto = proto::MeshToProto(mesh);
  ASSERT_TRUE(proto.has_reduce_gbps());
  EXPECT_EQ(proto.reduce_gbps(), 0.6);
  EXPECT_FALSE(proto.has_copy_gbps());
  ExpectRoundTripWithOwnId(mesh);
  v1::Mesh bad = proto;
  bad.set_reduce_gbps(-1);
  EXPECT_EQ(proto::MeshFromProto(bad).status().message(),
            "mesh.reduce_gbps: must be in [1e-06, 1e+09] GB/s, got -1");
}

TEST(ConvertTest, AllToAllLatencyRoundTrips) {
  MeshSpec spec{.shape = {2, 2}, .flattened = {{"d0", "d1"}}};
  spec.links = {LinkParams{.all_to_all_us = 900}, LinkParams{0.5, 20}};
  spec.flattened_links = {LinkParams{.all_to_all_us = 3100}};
  const Mesh mesh = Mesh::Create(spec).value();
  const v1::Mesh proto = proto::MeshToProto(mesh);
  ASSERT_TRUE(proto.links(0).has_all_to_all_us());
  EXPECT_EQ(proto.links(0).all_to_all_us(), 900);
  EXPECT_FALSE(proto.links(1).has_all_to_all_us());
  absl::StatusOr<Mesh> back = proto::MeshFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == mesh);
  EXPECT_EQ(back->flattened_links()[0].all_to_all_us, 3100);
  EXPECT_EQ(proto::MeshId(*back), proto::MeshId(mesh));
}

TEST(ConvertTest, PlanRequestRoundTrips) {
  const Mesh mesh = TestMesh();
  PlanOptions options;
  options.planner = PlannerKind::kTorchGraph;
  options.cost_model = CostModelKind::kTorch;
  options.merge = true;
  options.devices_per_host = 4;
  options.flatten_policy = FlattenPolicy::kNone;
  options.search_budget = 1234;
  options.max_peak_bytes = 4096;
  const PlanRequest request = TestRequest(mesh, options);
  absl::StatusOr<PlanRequest> back = proto::PlanRequestFromProto(
      mesh, proto::TensorToProto(request.tensor),
      proto::StateToProto(request.src), proto::StateToProto(request.dst),
      proto::OptionsToProto(request.options), 99);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->tensor == request.tensor);
  EXPECT_TRUE(back->src == request.src) << back->src.ToString();
  EXPECT_TRUE(back->dst == request.dst) << back->dst.ToString();
  const PlanOptions& o = back->options;
  EXPECT_EQ(o.planner, PlannerKind::kTorchGraph);
  EXPECT_EQ(o.cost_model, CostModelKind::kTorch);
  EXPECT_TRUE(o.merge);
  EXPECT_EQ(o.devices_per_host, 4);
  EXPECT_EQ(o.flatten_policy, FlattenPolicy::kNone);
  EXPECT_EQ(o.search_budget, 1234);
  EXPECT_EQ(o.max_peak_bytes, 4096);
}

TEST(ConvertTest, UnsetFieldsTakeDefaults) {
  const Mesh mesh = TestMesh();
  v1::Tensor tensor;
  tensor.add_shape(8);
  v1::DistState src, dst;
  src.set_text("S(-1),R,R");  // text form, negative dim
  dst.set_text("R,R,R");
  absl::StatusOr<PlanRequest> r =
      proto::PlanRequestFromProto(mesh, tensor, src, dst, {}, 77);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tensor.dtype(), DType::kFloat32);
  EXPECT_EQ(r->src.ToString(), "S(0),R,R");
  EXPECT_EQ(r->options.planner, PlannerKind::kOptimal);
  EXPECT_EQ(r->options.cost_model, CostModelKind::kAlphaBeta);
  EXPECT_EQ(r->options.flatten_policy, FlattenPolicy::kExisting);
  EXPECT_EQ(r->options.devices_per_host, PlanOptions{}.devices_per_host);
  EXPECT_EQ(r->options.search_budget, 77);
  EXPECT_FALSE(r->options.max_peak_bytes.has_value());
}

TEST(ConvertTest, NormalizesNegativeShardDimsInPlacements) {
  const Mesh mesh = TestMesh();
  v1::Tensor tensor;
  tensor.add_shape(8);
  tensor.add_shape(8);
  v1::DistState src;
  src.add_placements()->mutable_shard()->set_dim(-1);
  src.add_placements()->mutable_replicate();
  src.add_placements()->mutable_partial()->set_op(v1::REDUCE_OP_MAX);
  v1::DistState dst = src;
  dst.mutable_placements(0)->mutable_shard()->set_dim(-3);
  absl::StatusOr<PlanRequest> r =
      proto::PlanRequestFromProto(mesh, tensor, src, dst, {}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "dst.placements[0]: shard dim -3 out of range for a tensor of "
            "rank 2");
  dst.mutable_placements(0)->mutable_shard()->set_dim(-2);
  r = proto::PlanRequestFromProto(mesh, tensor, src, dst, {}, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->src.ToString(), "S(1),R,P(max)");
  EXPECT_EQ(r->dst.ToString(), "S(0),R,P(max)");
}

TEST(ConvertTest, RefusesUnknownEnumValuesNamingTheField) {
  const Mesh mesh = TestMesh();
  const PlanRequest request = TestRequest(mesh, {});
  auto convert = [&](const v1::PlanOptions& options) {
    return proto::PlanRequestFromProto(
               mesh, proto::TensorToProto(request.tensor),
               proto::StateToProto(request.src),
               proto::StateToProto(request.dst), options, 1)
        .status();
  };
  v1::PlanOptions o;
  o.set_planner(static_cast<v1::PlannerKind>(42));
  EXPECT_EQ(convert(o).message(), "options.planner: unknown planner value 42");
  o = {};
  o.set_cost_model(static_cast<v1::CostModel>(42));
  EXPECT_EQ(convert(o).message(),
            "options.cost_model: unknown cost model value 42");
  o = {};
  o.set_flatten_policy(static_cast<v1::FlattenPolicy>(42));
  EXPECT_EQ(convert(o).message(),
            "options.flatten_policy: unknown flatten policy value 42");
}

TEST(ConvertTest, PlanRoundTrips) {
  const Mesh mesh = TestMesh();
  PlanOptions options;
  options.flatten_policy = FlattenPolicy::kAny;
  const PlanRequest request = TestRequest(mesh, options);
  absl::StatusOr<Plan> plan = MakePlan(mesh, request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->steps.empty());
  plan->warnings.push_back(
      {WarningCode::kSearchBudgetExceeded, {"dp"}, "a note", 1.5});
  v1::Plan proto;
  proto::PlanToProto(mesh, *plan, &proto);
  EXPECT_EQ(proto.trace(), PlanTrace(*plan));
  absl::StatusOr<Plan> back = proto::PlanFromProto(mesh, proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(PlanJson(mesh, *back), PlanJson(mesh, *plan));
}

TEST(ConvertTest, PlanFromProtoChecksStepsAgainstTheirStates) {
  const Mesh mesh = TestMesh();
  const Plan plan = MakePlan(mesh, TestRequest(mesh, {})).value();
  v1::Plan proto;
  proto::PlanToProto(mesh, plan, &proto);
  proto.mutable_steps(0)->set_op("chunk");
  absl::StatusOr<Plan> back = proto::PlanFromProto(mesh, proto);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(back.status().message().find("plan.steps[0]"), std::string::npos)
      << back.status();
}

TEST(ConvertTest, PlanFromProtoRefusesUnknownNames) {
  const Mesh mesh = TestMesh();
  const Plan plan = MakePlan(mesh, TestRequest(mesh, {})).value();
  v1::Plan proto;
  proto::PlanToProto(mesh, plan, &proto);
  v1::Plan bad = proto;
  bad.set_planner("greedy");
  EXPECT_EQ(proto::PlanFromProto(mesh, bad).status().message(),
            "plan.planner: unknown planner \"greedy\"");
  bad = proto;
  bad.set_cost_model("ab");
  EXPECT_EQ(proto::PlanFromProto(mesh, bad).status().message(),
            "plan.cost_model: unknown cost model \"ab\"");
  bad = proto;
  bad.add_warnings()->set_code("odd");
  EXPECT_EQ(proto::PlanFromProto(mesh, bad).status().message(),
            "plan.warnings[0].code: unknown warning code \"odd\"");
}

TEST(ConvertTest, StatusRoundTrips) {
  for (const absl::Status& s :
       {absl::OkStatus(), absl::InvalidArgumentError("src[0]: bad"),
        absl::ResourceExhaustedError("full"), absl::UnavailableError("x"),
        absl::DeadlineExceededError("late")}) {
    const grpc::Status g = proto::StatusToGrpc(s);
    EXPECT_EQ(static_cast<int>(g.error_code()), static_cast<int>(s.code()));
    EXPECT_EQ(proto::StatusFromGrpc(g), s);
  }
}

// A failed run's ranks travel as a reshard.v1.RunFailure in the status's
// details and come back as the same payload; the summary stays the message.
TEST(ConvertTest, RankFailuresTravelInTheStatusDetails) {
  const std::vector<RankFailure> ranks = {
      {3, "10.0.0.4", "lost", "its agent's dispatch stream closed"},
      {1, "", "timeout", "all_gather(A) timed out"}};
  const absl::Status failed =
      WithRankFailures(absl::UnavailableError("run r failed: ..."), ranks);
  const grpc::Status g = proto::StatusToGrpc(failed);
  EXPECT_EQ(g.error_message(), "run r failed: ...");
  v1::RunFailure details;
  ASSERT_TRUE(details.ParseFromString(g.error_details()));
  ASSERT_EQ(details.ranks_size(), 2);
  EXPECT_EQ(details.ranks(0).rank(), 3);
  EXPECT_EQ(details.ranks(0).host(), "10.0.0.4");
  EXPECT_EQ(details.ranks(0).kind(), "lost");
  const absl::Status back = proto::StatusFromGrpc(g);
  EXPECT_EQ(back.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(back.message(), "run r failed: ...");
  EXPECT_EQ(RankFailuresOf(back), ranks);
  // Details that are not a RunFailure leave the status as it is.
  const absl::Status odd = proto::StatusFromGrpc(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "x", "\xff\xff"));
  EXPECT_TRUE(RankFailuresOf(odd).empty());
  EXPECT_EQ(odd, absl::UnavailableError("x"));
}

}  // namespace
}  // namespace reshard
