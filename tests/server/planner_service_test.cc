// Integration tests against real reshard-planner processes on loopback:
// every RPC, gRPC plans identical to offline plans on random cases, health
// and reflection, invalid requests (one test per field), the peak cap and
// search budget, start-up limits. Deadlines, SIGTERM under load,
// concurrency and scale-out: planner_service_load_test.cc.
#include <functional>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/format/plan_format.h"
#include "proto/convert.h"
#include "reference/plan_check.h"
#include "reshard/client.h"
#include "tests/planner/random_cases.h"
#include "tests/planner/test_util.h"
#include "tests/server/planner_service_calls.h"
#include "tests/server/server_process.h"

namespace reshard::server {
namespace {

using testing::Comparable;
using testing::Connect;
using testing::MakeMesh;
using testing::RawStub;
using testing::Request;
using testing::ServerProcess;
using testing::TextRequest;

// ResolveGroups on the (2,2,2) mesh with A_C registered: rank 5's groups.
void ExpectGroupsOfRankFive(Client& client, const std::string& id) {
  absl::StatusOr<std::vector<ResolvedGroup>> groups =
      client.ResolveGroups(id, 5);
  ASSERT_TRUE(groups.ok()) << groups.status();
  std::map<std::string, ResolvedGroup> by_name;
  for (const ResolvedGroup& g : *groups) by_name[g.name] = g;
  EXPECT_EQ(by_name["A"].ranks, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(by_name["C"].ranks, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(by_name["A_C"].ranks, (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(by_name["A_C"].index, 3);
}

TEST(PlannerServiceTest, EveryRpc) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  ASSERT_TRUE(client->Health().ok());

  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  absl::StatusOr<std::string> id = client->RegisterMesh(mesh);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, proto::MeshId(mesh));
  EXPECT_EQ(*client->RegisterMesh(mesh), *id);  // idempotent

  absl::StatusOr<Mesh> fetched = client->GetMesh(*id);
  ASSERT_TRUE(fetched.ok());
  EXPECT_TRUE(*fetched == mesh);
  absl::StatusOr<std::vector<std::pair<std::string, Mesh>>> list =
      client->ListMeshes();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].first, *id);

  const PlanRequest request =
      Request(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R");
  absl::StatusOr<Plan> by_id = client->PlanRegistered(*id, request);
  ASSERT_TRUE(by_id.ok()) << by_id.status();
  EXPECT_EQ(PlanTrace(*by_id), "P(sum)RP(sum)-->RRR");
  absl::StatusOr<Plan> inline_plan = client->PlanInline(mesh, request);
  ASSERT_TRUE(inline_plan.ok());
  EXPECT_TRUE(inline_plan->cache_hit);  // same request, same server
  EXPECT_EQ(Comparable(mesh, *by_id), Comparable(mesh, *inline_plan));

  absl::StatusOr<std::vector<Plan>> batch = client->PlanBatch(
      mesh, {request, Request(mesh, {8}, "S(0),S(0),R", "R,R,R"),
             Request(mesh, {9, 3}, "P(avg),S(1),R", "S(0),R,P(avg)")});
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->size(), 3u);
  EXPECT_EQ(PlanTrace((*batch)[0]), "P(sum)RP(sum)-->RRR");
  for (const Plan& p : *batch) EXPECT_TRUE(CheckPlan(mesh, p).ok());

  ASSERT_NO_FATAL_FAILURE(ExpectGroupsOfRankFive(*client, *id));

  // Another client deletes the mesh (as a restarted replica would lose it).
  ASSERT_TRUE(Connect(server.address())->DeleteMesh(*id).ok());
  absl::StatusOr<Mesh> gone = client->GetMesh(*id);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("mesh_id: unknown mesh"),
            std::string::npos);
  // Planning by id re-registers transparently.
  absl::StatusOr<Plan> again = client->PlanRegistered(*id, request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(Comparable(mesh, *again), Comparable(mesh, *by_id));
  EXPECT_EQ(server.Stop(), 0);
}

// A step on (B,C) runs on the registered (B,C,D) where D has size 1: the
// plan names that group, and ResolveGroups gives every rank the step's own
// members under that name.
TEST(PlannerServiceTest, PlannedGroupsResolveWhereSizeOneDimsDiffer) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const Mesh mesh = MakeMesh(
      {4, 2, 4, 1}, {{"A", "B", "D"}, {"B", "C", "D"}, {"A", "C", "D"}});
  absl::StatusOr<std::string> id = client->RegisterMesh(mesh);
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<Plan> plan = client->PlanRegistered(
      *id, Request(mesh, {8}, "P(max),S(0)[0],S(0)[1],S(0)[2]",
                   "S(0)[0],S(0)[1],S(0)[2],S(0)[3]"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->warnings.empty());
  int multi_dim = 0;
  for (int64_t rank = 0; rank < mesh.world_size(); ++rank) {
    absl::StatusOr<std::vector<ResolvedGroup>> groups =
        client->ResolveGroups(*id, rank);
    ASSERT_TRUE(groups.ok()) << groups.status();
    std::map<std::string, ResolvedGroup> by_name;
    for (const ResolvedGroup& g : *groups) by_name[g.name] = g;
    for (const Step& s : plan->steps) {
      if (s.group.size() < 2) continue;
      ++multi_dim;
      const std::string name = mesh.GroupName(s.group);
      ASSERT_EQ(by_name.count(name), 1u) << name;
      EXPECT_EQ(by_name[name].ranks, mesh.GroupRanks(rank, s.group)) << name;
    }
  }
  EXPECT_EQ(multi_dim, mesh.world_size());  // one all_gather on B_C_D
  EXPECT_EQ(server.Stop(), 0);
}

TEST(PlannerServiceTest, GrpcPlansEqualOfflinePlans) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  std::mt19937_64 rng(99);
  const int cases = testing::ScaledCases(1000);
  for (int i = 0; i < cases; ++i) {
    const testing::RandomCase c = testing::MakeRandomCase(rng);
    PlanOptions options;
    options.planner = static_cast<PlannerKind>(i % 3);
    options.merge = i % 2;
    options.cost_model =
        i % 5 == 0 ? CostModelKind::kTorch : CostModelKind::kAlphaBeta;
    const PlanRequest request{c.tensor, c.src, c.dst, options};
    absl::StatusOr<Plan> offline = MakePlan(c.mesh, request);
    absl::StatusOr<Plan> remote = client->PlanInline(c.mesh, request);
    ASSERT_EQ(offline.ok(), remote.ok()) << i << ": " << remote.status();
    if (!offline.ok()) {
      EXPECT_EQ(offline.status(), remote.status());
      continue;
    }
    ASSERT_EQ(Comparable(c.mesh, *offline), Comparable(c.mesh, *remote)) << i;
    ASSERT_TRUE(CheckPlan(c.mesh, *remote, i).ok()) << i;
  }
}

// Health and reflection are standard: grpc.health.v1 answers SERVING (for
// the server and for reshard.v1.Planner) and reflection lists the services.
TEST(PlannerServiceTest, HealthAndReflection) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto channel =
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  for (const char* service : {"", "reshard.v1.Planner"}) {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&ctx, request, &response).ok()) << service;
    EXPECT_EQ(response.status(),
              grpc::health::v1::HealthCheckResponse::SERVING);
  }
  auto reflection =
      grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext ctx;
  auto stream = reflection->ServerReflectionInfo(&ctx);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::set<std::string> services;
  for (const auto& s : response.list_services_response().service()) {
    services.insert(s.name());
  }
  EXPECT_TRUE(services.count("reshard.v1.Planner"));
  EXPECT_TRUE(services.count("grpc.health.v1.Health"));
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(server.Stop(), 0);
}

// The flags of the server that the invalid requests go to: limits small
// enough for a request to pass them.
std::vector<std::string> LimitFlags() {
  return {"--max_meshes=1", "--max_batch_items=2", "--search_budget=1000",
          "--max_search_budget=5000"};
}

// A request that plans; each invalid request spoils one field of it.
v1::PlanRequest GoodRequest() {
  return TextRequest(MakeMesh({2, 2}), {8, 8}, "S(0),R", "R,R");
}

// An invalid Plan request: how it spoils GoodRequest(), and the code and
// the message part (the field first) that the server answers.
struct InvalidRequest {
  std::string name;
  std::function<void(v1::PlanRequest&)> mutate;
  grpc::StatusCode code;
  std::string message;
};

void PrintTo(const InvalidRequest& c, std::ostream* os) { *os << c.name; }

std::vector<InvalidRequest> MeshCases() {
  return {
      {"NoMesh", [](auto& r) { r.clear_mesh(); }, grpc::INVALID_ARGUMENT,
       "mesh_ref: set mesh_id or mesh"},
      {"UnknownId", [](auto& r) { r.set_mesh_id("mesh-0"); }, grpc::NOT_FOUND,
       "mesh_id: unknown mesh \"mesh-0\""},
      {"ZeroMeshSize", [](auto& r) { r.mutable_mesh()->set_shape(1, 0); },
       grpc::INVALID_ARGUMENT, "mesh.shape[1]: size must be >= 1"},
      {"DuplicateDim", [](auto& r) { r.mutable_mesh()->set_dim_names(1, "A"); },
       grpc::INVALID_ARGUMENT, "mesh.dim_names[1]: duplicate name \"A\""},
      {"BadDimName", [](auto& r) { r.mutable_mesh()->set_dim_names(0, "a b"); },
       grpc::INVALID_ARGUMENT, "mesh.dim_names[0]"},
      {"UnknownFlattened",
       [](auto& r) {
         auto* g = r.mutable_mesh()->add_flattened();
         g->add_dims("A");
         g->add_dims("Z");
       },
       grpc::INVALID_ARGUMENT, "mesh.flattened[0][1]: unknown dim \"Z\""},
      {"RankMapDuplicate",
       [](auto& r) {
         for (int64_t k : {0, 1, 1, 3}) r.mutable_mesh()->add_rank_map(k);
       },
       grpc::INVALID_ARGUMENT, "mesh.rank_map[2]: duplicate rank 1"},
      {"NineMeshDims",
       [](auto& r) {
         for (int i = 0; i < 7; ++i) {
           r.mutable_mesh()->add_shape(1);
           r.mutable_mesh()->add_dim_names("x" + std::to_string(i));
         }
       },
       grpc::INVALID_ARGUMENT, "mesh.shape: 9 entries, at most 8"},
      {"LinkBandwidthThatMakesEveryStepInfinite",
       [](auto& r) {
         r.mutable_mesh()->add_links()->set_bandwidth_gbps(5e-324);
         r.mutable_mesh()->add_links();
       },
       grpc::INVALID_ARGUMENT,
       "mesh.links[0].bandwidth_gbps: must be in [1e-06, 1e+09] GB/s, got "
       "5e-324"},
  };
}

std::vector<InvalidRequest> TensorAndTextCases() {
  return {
      {"TensorSizeZero", [](auto& r) { r.mutable_tensor()->set_shape(0, 0); },
       grpc::INVALID_ARGUMENT, "tensor.shape[0]: size must be >= 1"},
      {"TensorOverflow",
       [](auto& r) {
         r.mutable_tensor()->set_shape(0, int64_t{1} << 40);
         r.mutable_tensor()->set_shape(1, int64_t{1} << 40);
       },
       grpc::INVALID_ARGUMENT,
       "tensor.shape: the tensor's byte size overflows int64"},
      {"BadDtype",
       [](auto& r) {
         r.mutable_tensor()->set_dtype(static_cast<v1::DType>(42));
       },
       grpc::INVALID_ARGUMENT, "tensor.dtype: unknown dtype value 42"},
      {"GarbagePlacement", [](auto& r) { r.mutable_src()->set_text("Q,R"); },
       grpc::INVALID_ARGUMENT, "src[0]: cannot parse a placement"},
      {"ShardDimOutOfRange",
       [](auto& r) { r.mutable_dst()->set_text("S(2),R"); },
       grpc::INVALID_ARGUMENT, "dst[0]: shard dim 2 out of range"},
      {"PlacementCount", [](auto& r) { r.mutable_src()->set_text("R"); },
       grpc::INVALID_ARGUMENT, "src: has 1 placements"},
      {"EmptyState", [](auto& r) { r.mutable_src()->clear_text(); },
       grpc::INVALID_ARGUMENT, "src: needs placements or text"},
      {"MixedPartials",
       [](auto& r) { r.mutable_src()->set_text("P(max),P(sum)"); },
       grpc::INVALID_ARGUMENT, "src[1]: P(sum) mixed with P(max)"},
  };
}

// Placements given as messages, not text.
std::vector<InvalidRequest> TypedStateCases() {
  return {
      {"TypedShardOutOfRange",
       [](auto& r) {
         r.mutable_src()->clear_text();
         r.mutable_src()->add_placements()->mutable_shard()->set_dim(5);
         r.mutable_src()->add_placements()->mutable_replicate();
       },
       grpc::INVALID_ARGUMENT, "src.placements[0]: shard dim 5 out of range"},
      {"TypedKindUnset",
       [](auto& r) {
         r.mutable_src()->clear_text();
         r.mutable_src()->add_placements();
         r.mutable_src()->add_placements();
       },
       grpc::INVALID_ARGUMENT, "src.placements[0]: placement kind is not set"},
      {"OrderInconsistent",
       [](auto& r) {
         r.mutable_src()->clear_text();
         r.mutable_src()->add_placements()->mutable_shard()->set_dim(0);
         r.mutable_src()->add_placements()->mutable_replicate();
         auto* e = r.mutable_src()->add_shard_order();
         e->set_tensor_dim(0);
         e->add_mesh_dims(1);
       },
       grpc::INVALID_ARGUMENT,
       "src.shard_order[0]: mesh dim 1 does not hold S(0)"},
  };
}

std::vector<InvalidRequest> OptionCases() {
  return {
      {"BadPlanner",
       [](auto& r) {
         r.mutable_options()->set_planner(static_cast<v1::PlannerKind>(9));
       },
       grpc::INVALID_ARGUMENT, "options.planner: unknown planner value 9"},
      {"BadDevicesPerHost",
       [](auto& r) { r.mutable_options()->set_devices_per_host(-3); },
       grpc::INVALID_ARGUMENT, "options.devices_per_host: must be >= 1"},
      {"BadMaxPeakBytes",
       [](auto& r) { r.mutable_options()->set_max_peak_bytes(0); },
       grpc::INVALID_ARGUMENT, "options.max_peak_bytes: must be >= 1"},
      {"BudgetAboveTheServersLimit",
       [](auto& r) { r.mutable_options()->set_search_budget(5001); },
       grpc::INVALID_ARGUMENT,
       "options.search_budget: 5001 is above this server's limit of 5000"},
  };
}

std::vector<InvalidRequest> InvalidRequests() {
  std::vector<InvalidRequest> all;
  for (auto cases :
       {MeshCases(), TensorAndTextCases(), TypedStateCases(), OptionCases()}) {
    for (InvalidRequest& c : cases) all.push_back(std::move(c));
  }
  return all;
}

class InvalidRequestTest : public ::testing::TestWithParam<InvalidRequest> {};

// The server refuses the spoilt request naming the field, and serves on.
TEST_P(InvalidRequestTest, NamesTheField) {
  ServerProcess server(LimitFlags());
  ASSERT_NE(server.port(), 0) << server.log();
  RawStub raw(server.address());
  const v1::PlanRequest good = GoodRequest();
  ASSERT_TRUE(raw.Plan(good).ok());
  v1::PlanRequest r = good;
  GetParam().mutate(r);
  const grpc::Status s = raw.Plan(r);
  EXPECT_EQ(s.error_code(), GetParam().code) << s.error_message();
  EXPECT_NE(s.error_message().find(GetParam().message), std::string::npos)
      << s.error_message();
  EXPECT_TRUE(raw.Plan(good).ok());  // nothing crashed
  EXPECT_NE(server.log().find("rpc=Plan"), std::string::npos);
  EXPECT_EQ(server.Stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Plan, InvalidRequestTest, ::testing::ValuesIn(InvalidRequests()),
    [](const ::testing::TestParamInfo<InvalidRequest>& info) {
      return info.param.name;
    });

TEST(InvalidRequestTableTest, CaseNamesAreUnique) {
  const std::vector<InvalidRequest> all = InvalidRequests();
  EXPECT_EQ(all.size(), 24u);
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_NE(all[i].name, all[j].name);
  }
}

// A PlanBatch call: its status.
grpc::Status PlanBatch(RawStub& raw, const v1::PlanBatchRequest& batch) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::PlanBatchResponse out;
  return raw.stub().PlanBatch(&ctx, batch, &out);
}

// A batch over --max_batch_items, and an all-or-nothing batch with a bad
// item, each refused naming the field.
TEST(PlannerServiceTest, InvalidBatchesNameTheField) {
  ServerProcess server(LimitFlags());
  ASSERT_NE(server.port(), 0) << server.log();
  RawStub raw(server.address());
  const v1::PlanRequest good = GoodRequest();
  v1::PlanBatchRequest batch;
  *batch.mutable_mesh() = good.mesh();
  for (int i = 0; i < 3; ++i) {
    auto* item = batch.add_items();
    *item->mutable_tensor() = good.tensor();
    *item->mutable_src() = good.src();
    *item->mutable_dst() = good.dst();
  }
  grpc::Status s = PlanBatch(raw, batch);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_NE(
      s.error_message().find("items: 3 entries, at most 2 (--max_batch_items)"),
      std::string::npos);
  batch.mutable_items()->RemoveLast();
  batch.mutable_items(1)->mutable_src()->set_text("S(7),R");
  batch.set_all_or_nothing(true);  // per-item errors: plan_batch_test.cc
  s = PlanBatch(raw, batch);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("items[1].src[0]: shard dim 7"),
            std::string::npos)
      << s.error_message();
  EXPECT_EQ(server.Stop(), 0);
}

// A full registry refuses another mesh and loses none; ResolveGroups of a
// rank outside the mesh and DeleteMesh of an unknown id are refused.
TEST(PlannerServiceTest, RegistryLimitsAndUnknownIdsAreRefused) {
  ServerProcess server(LimitFlags());
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const Mesh mesh = MakeMesh({2, 2});
  absl::StatusOr<std::string> id = client->RegisterMesh(mesh);
  ASSERT_TRUE(id.ok());
  absl::StatusOr<std::string> full = client->RegisterMesh(MakeMesh({4}));
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("the registry is full"),
            std::string::npos);
  EXPECT_TRUE(client->GetMesh(*id).ok());  // nothing stored was lost
  absl::StatusOr<std::vector<ResolvedGroup>> bad_rank =
      client->ResolveGroups(*id, 4);
  EXPECT_EQ(bad_rank.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      bad_rank.status().message().find("rank: 4 is not a rank of the mesh"),
      std::string::npos);
  EXPECT_EQ(client->DeleteMesh("mesh-nope").code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(client->Health().ok());  // nothing crashed
  EXPECT_EQ(server.Stop(), 0);
}

// The peak cap holds for PyTorch's planners inside PlanBatch too, and
// torch_graph stops at the request's budget (on this 8-D mesh a fixed
// 2,000,000 states would take ~20 s whatever the budget).
TEST(PlannerServiceTest, CapAndBudgetHoldForTorchPlanners) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  RawStub raw(server.address());
  v1::PlanBatchRequest batch;
  *batch.mutable_mesh() = proto::MeshToProto(MakeMesh({4}));
  auto* item = batch.add_items();
  item->mutable_tensor()->add_shape(64);
  item->mutable_tensor()->add_shape(64);
  item->mutable_src()->set_text("S(0)");
  item->mutable_dst()->set_text("R");
  batch.mutable_options()->set_planner(v1::PLANNER_KIND_TORCH_GREEDY);
  batch.mutable_options()->set_max_peak_bytes(10000);
  batch.set_all_or_nothing(true);  // the refusal is the whole call's
  {
    grpc::ClientContext ctx;
    v1::PlanBatchResponse out;
    const grpc::Status s = raw.stub().PlanBatch(&ctx, batch, &out);
    EXPECT_EQ(s.error_code(), grpc::FAILED_PRECONDITION) << s.error_message();
    EXPECT_NE(s.error_message().find(
                  "items[0].options.max_peak_bytes: the torch_greedy plan"),
              std::string::npos)
        << s.error_message();
    EXPECT_NE(s.error_message().find("peaks at 20480 bytes per rank"),
              std::string::npos)
        << s.error_message();
    EXPECT_NE(s.error_message().find("above the cap of 10000 bytes"),
              std::string::npos);
  }
  v1::PlanRequest graph = TextRequest(
      MakeMesh({2, 2, 2, 2, 2, 2, 2, 2}), {1024, 512, 256, 64},
      "S(0),P(sum),R,S(3),P(sum),S(1),R,S(2)", "S(1),R,S(2),R,S(0),R,P(sum),R");
  graph.mutable_options()->set_planner(v1::PLANNER_KIND_TORCH_GRAPH);
  graph.mutable_options()->set_search_budget(1000);
  const grpc::Status s = raw.Plan(graph, nullptr, std::chrono::seconds(5));
  EXPECT_EQ(s.error_code(), grpc::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find(
                "options.search_budget: torch_graph expanded 1000 states"),
            std::string::npos)
      << s.error_message();
  EXPECT_EQ(server.Stop(), 0);
}

TEST(PlannerServiceTest, RefusesADefaultBudgetAboveItsLimit) {
  ServerProcess server({"--search_budget=10", "--max_search_budget=5"});
  EXPECT_EQ(server.port(), 0);
  EXPECT_EQ(server.Stop(), 2);
  EXPECT_NE(server.log().find(
                "--search_budget=10 must be in [1, --max_search_budget=5]"),
            std::string::npos)
      << server.log();
}

}  // namespace
}  // namespace reshard::server
