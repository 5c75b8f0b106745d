// PlanCrossMesh on a real reshard-planner (docs/DESIGN.md §9): plans equal
// the in-process planner's, meshes by id or inline, errors naming their
// field; and a reply that omits its transfers is expanded again by the
// client. PlanCrossMeshBatch: the in-process batch's schedule, a tensor
// that cannot be planned as its own error, refusals naming tensors[t].
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_planner.h"
#include "planner/format/cross_plan_format.h"
#include "proto/convert.h"
#include "proto/cross_convert.h"
#include "reshard/client.h"
#include "tests/server/planner_service_calls.h"
#include "tests/server/server_process.h"

namespace reshard::server {
namespace {

using testing::Connect;
using testing::RawStub;
using testing::ServerProcess;

Mesh MeshWith(std::vector<int64_t> shape, std::vector<std::string> names,
              std::vector<int64_t> ranks) {
  return *Mesh::Create({.shape = shape, .dim_names = names, .rank_map = ranks});
}

struct Pair {
  Mesh src, dst;
  CrossMeshRequest request;
};

std::vector<Pair> Pairs() {
  const Mesh a = MeshWith({4, 2}, {"A", "B"}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Mesh b = MeshWith({2, 4}, {"X", "Y"}, {8, 9, 10, 11, 12, 13, 14, 15});
  const Mesh c = MeshWith({2, 2}, {"P", "Q"}, {6, 7, 8, 9});
  std::vector<Pair> pairs;
  auto add = [&](const Mesh& s, const Mesh& d, std::vector<int64_t> shape,
                 const char* src, const char* dst,
                 std::vector<int64_t> unavailable) {
    absl::StatusOr<CrossMeshRequest> r = ParseCrossMeshRequest(
        s, d, shape, "bf16", src, dst, unavailable, {}, {});
    EXPECT_TRUE(r.ok()) << r.status();
    pairs.push_back({s, d, *r});
  };
  add(a, b, {16, 16}, "S(0),R", "R,S(1)", {});
  add(a, c, {9, 7}, "S(1),P(sum)", "S(0),P(avg)", {});
  add(b, a, {5, 3, 2}, "S(2),R", "R,S(0)", {8, 13});
  add(c, b, {8}, "R,R", "S(0),R", {6, 9});
  return pairs;
}

std::string WithoutTiming(const Pair& p, CrossMeshPlan plan) {
  plan.planning_us = 0;
  return CrossPlanJson(p.src, p.dst, plan);
}

TEST(CrossMeshServiceTest, GrpcPlansEqualInProcessPlans) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  for (const Pair& p : Pairs()) {
    absl::StatusOr<CrossMeshPlan> offline =
        MakeCrossMeshPlan(p.src, p.dst, p.request);
    absl::StatusOr<CrossMeshPlan> remote =
        client->PlanCrossMesh(p.src, p.dst, p.request);
    ASSERT_TRUE(offline.ok() && remote.ok())
        << offline.status() << remote.status();
    EXPECT_EQ(WithoutTiming(p, *offline), WithoutTiming(p, *remote));
  }
}

TEST(CrossMeshServiceTest, MeshesByIdAndErrorsNamingTheirField) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const Pair p = Pairs()[0];
  absl::StatusOr<std::string> src_id = client->RegisterMesh(p.src);
  absl::StatusOr<std::string> dst_id = client->RegisterMesh(p.dst);
  ASSERT_TRUE(src_id.ok() && dst_id.ok());
  v1::PlanCrossMeshRequest by_id =
      proto::CrossRequestToProto(p.src, p.dst, p.request);
  by_id.set_src_mesh_id(*src_id);
  by_id.set_dst_mesh_id(*dst_id);
  RawStub raw(server.address());
  grpc::ClientContext ctx;
  v1::PlanCrossMeshResponse response;
  grpc::Status s = raw.stub().PlanCrossMesh(&ctx, by_id, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.plan().transfers_size(), 32);

  struct Case {
    std::function<void(v1::PlanCrossMeshRequest&)> edit;
    grpc::StatusCode code;
    std::string message;
  } cases[] = {
      {[](auto& r) { r.set_src_mesh_id("mesh-unknown"); },
       grpc::StatusCode::NOT_FOUND,
       "src_mesh_id: unknown mesh \"mesh-unknown\""},
      {[](auto& r) { r.clear_dst_mesh(); }, grpc::StatusCode::INVALID_ARGUMENT,
       "dst_mesh_ref: set dst_mesh_id or dst_mesh"},
      {[](auto& r) { r.mutable_dst_mesh()->add_rank_map(99); },
       grpc::StatusCode::INVALID_ARGUMENT, "dst_mesh: mesh.rank_map"},
      {[](auto& r) {
         r.mutable_dst()->Clear();
         r.mutable_dst()->set_text("R,P(max)");
       },
       grpc::StatusCode::INVALID_ARGUMENT,
       "dst[1]: P(max) cannot be a cross-mesh destination"},
      {[](auto& r) { r.add_unavailable_ranks(8); },
       grpc::StatusCode::INVALID_ARGUMENT,
       "unavailable_ranks[0]: rank 8 is not a rank of the source mesh"},
  };
  for (const Case& c : cases) {
    v1::PlanCrossMeshRequest r =
        proto::CrossRequestToProto(p.src, p.dst, p.request);
    c.edit(r);
    grpc::ClientContext call;
    grpc::Status status = raw.stub().PlanCrossMesh(&call, r, &response);
    EXPECT_EQ(status.error_code(), c.code) << c.message;
    EXPECT_EQ(status.error_message().rfind(c.message, 0), 0u)
        << status.error_message();
  }
}

TEST(CrossMeshServiceTest, OmittedTransfersAreExpandedFromTheRule) {
  const Pair p = Pairs()[1];
  absl::StatusOr<CrossMeshPlan> plan =
      MakeCrossMeshPlan(p.src, p.dst, p.request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  v1::CrossMeshPlan wire;
  proto::CrossPlanToProto(p.src, p.dst, *plan, 1, &wire);
  EXPECT_EQ(wire.transfers_size(), 0);
  EXPECT_EQ(wire.transfers_omitted(),
            static_cast<int64_t>(plan->transfers.size()));
  absl::StatusOr<proto::CrossPlanWithMeshes> back =
      proto::CrossPlanFromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->plan.transfers, plan->transfers);
  EXPECT_EQ(WithoutTiming(p, back->plan), WithoutTiming(p, *plan));
  wire.set_layout_digest("0000000000000000");
  EXPECT_EQ(proto::CrossPlanFromProto(wire).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Zero planning times, so that two plannings of one batch compare.
std::string BatchWithoutTiming(const std::vector<CrossBatchItem>& items,
                               CrossBatchPlan batch) {
  batch.planning_us = 0;
  for (absl::StatusOr<CrossMeshPlan>& plan : batch.plans) {
    if (plan.ok()) plan->planning_us = 0;
  }
  return CrossBatchJson(*items.front().src_mesh, Pairs()[0].dst, items, batch);
}

TEST(CrossMeshServiceTest, ABatchOnTheServiceIsTheInProcessBatch) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const std::vector<Pair> pairs = Pairs();
  // Pairs 0 and 3 move to mesh b; the third tensor's shard 0 is held only
  // by unavailable ranks: its own FAILED_PRECONDITION.
  Pair unheld = pairs[0];
  unheld.request.unavailable_ranks = {0, 1};
  std::vector<CrossBatchItem> items;
  std::vector<Client::CrossBatchRequestTensor> tensors;
  for (const Pair* p :
       std::vector<const Pair*>{&pairs[0], &pairs[3], &unheld}) {
    const std::string name = absl::StrCat("w", items.size());
    items.push_back({name, std::make_shared<const Mesh>(p->src), p->request});
    tensors.push_back({name, p->src, p->dst, p->request});
  }
  absl::StatusOr<CrossBatchPlan> offline =
      MakeCrossMeshBatch(pairs[0].src, pairs[0].dst, items, 64);
  absl::StatusOr<CrossBatchPlan> remote =
      client->PlanCrossMeshBatch(tensors, 64);
  ASSERT_TRUE(offline.ok() && remote.ok())
      << offline.status() << remote.status();
  EXPECT_EQ(remote->plans[2].status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_GT(remote->buckets.size(), 1u);  // 64-byte buckets
  EXPECT_EQ(BatchWithoutTiming(items, *offline),
            BatchWithoutTiming(items, *remote));
}

TEST(CrossMeshServiceTest, ABatchsRefusalsNameTheirField) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  RawStub raw(server.address());
  const std::vector<Pair> pairs = Pairs();
  v1::PlanCrossMeshBatchRequest good;
  for (const Pair* p : {&pairs[0], &pairs[3]}) {
    *good.add_tensors() =
        proto::CrossRequestToProto(p->src, p->dst, p->request);
  }
  struct Case {
    std::function<void(v1::PlanCrossMeshBatchRequest&)> edit;
    std::string message;
  } cases[] = {
      {[](auto& r) { r.clear_tensors(); }, "tensors: 0 items, 1 to "},
      {[](auto& r) { r.set_bucket_bytes(0); },
       "bucket_bytes: must be at least 1, got 0"},
      {[](auto& r) {
         for (int i = 0; i < 3; ++i) r.add_names("n");
       },
       "names: 3 names for 2 tensors"},
      {[&](auto& r) {
         *r.mutable_tensors(1) = proto::CrossRequestToProto(
             pairs[1].src, pairs[1].dst, pairs[1].request);
       },
       "tensors[1].dst_mesh: not tensors[0]'s destination mesh"},
      {[](auto& r) {
         r.mutable_tensors(1)->mutable_dst_mesh()->add_rank_map(99);
       },
       "tensors[1].dst_mesh: mesh.rank_map"},
  };
  for (const Case& c : cases) {
    v1::PlanCrossMeshBatchRequest r = good;
    c.edit(r);
    grpc::ClientContext call;
    v1::PlanCrossMeshBatchResponse response;
    grpc::Status status = raw.stub().PlanCrossMeshBatch(&call, r, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << c.message;
    EXPECT_EQ(status.error_message().rfind(c.message, 0), 0u)
        << status.error_message();
  }
  grpc::ClientContext call;
  v1::PlanCrossMeshBatchResponse response;
  EXPECT_TRUE(raw.stub().PlanCrossMeshBatch(&call, good, &response).ok());
  EXPECT_EQ(response.plans_size(), 2);
}

}  // namespace
}  // namespace reshard::server
