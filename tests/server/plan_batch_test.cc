// PlanBatch on a real reshard-planner (docs/DESIGN.md §8): per-item errors by
// default and all-or-nothing on request, bucket_bytes, the batch limit, the
// buckets equal to the offline core's, the cache across repeated items,
// and the client library's calls (the old PlanBatch keeps its contract).
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/format/batch_format.h"
#include "planner/search/plan_cache.h"
#include "proto/convert.h"
#include "reshard/client.h"
#include "reshard/v1/planner.grpc.pb.h"
#include "tests/planner/test_util.h"
#include "tests/server/server_process.h"

namespace reshard::server {
namespace {

using testing::MakeMesh;
using testing::ServerProcess;

std::unique_ptr<Client> Connect(const std::string& target) {
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Create({.target = target});
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

v1::PlanBatchRequest TextBatch(const Mesh& mesh,
                               const std::vector<std::string>& srcs) {
  v1::PlanBatchRequest batch;
  *batch.mutable_mesh() = proto::MeshToProto(mesh);
  for (const std::string& src : srcs) {
    v1::PlanBatchRequest::Item* item = batch.add_items();
    item->mutable_tensor()->add_shape(8);
    item->mutable_tensor()->add_shape(8);
    item->mutable_src()->set_text(src);
    item->mutable_dst()->set_text("R,R");
  }
  return batch;
}

grpc::Status Call(const std::string& address, const v1::PlanBatchRequest& r,
                  v1::PlanBatchResponse* out) {
  auto stub = v1::Planner::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return stub->PlanBatch(&ctx, r, out);
}

TEST(PlanBatchServiceTest, BadItemsAreAnsweredAndTheRestBucketed) {
  ServerProcess server({"--max_batch_items=4"});
  ASSERT_NE(server.port(), 0) << server.log();
  const Mesh mesh = MakeMesh({2, 2});
  v1::PlanBatchRequest batch =
      TextBatch(mesh, {"S(0),R", "S(7),R", "S(0),R", "S(0),R"});
  v1::PlanBatchResponse out;
  grpc::Status s = Call(server.address(), batch, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(out.plans_size(), 4);
  EXPECT_EQ(out.plans(1).steps_size(), 0);  // the bad item's place
  ASSERT_EQ(out.errors_size(), 1);
  EXPECT_EQ(out.errors(0).item(), 1);
  EXPECT_EQ(out.errors(0).code(), grpc::INVALID_ARGUMENT);
  EXPECT_EQ(out.errors(0).message().rfind("items[1].src[0]: shard dim 7", 0),
            0u)
      << out.errors(0).message();
  ASSERT_EQ(out.buckets_size(), 1);
  EXPECT_EQ(out.buckets(0).op(), "all_gather");
  EXPECT_EQ(out.buckets(0).members_size(), 3);
  EXPECT_EQ(out.collectives_before(), 3);
  EXPECT_EQ(out.collectives_after(), 1);
  EXPECT_LT(out.time_us_after(), out.time_us_before());

  batch.set_all_or_nothing(true);
  s = Call(server.address(), batch, &out);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("items[1].src[0]: shard dim 7", 0), 0u);

  batch.set_all_or_nothing(false);
  batch.set_bucket_bytes(0);
  s = Call(server.address(), batch, &out);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "bucket_bytes: must be >= 1, got 0");

  batch.clear_bucket_bytes();
  *batch.add_items() = batch.items(0);
  s = Call(server.address(), batch, &out);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "items: 5 entries, at most 4 (--max_batch_items)");
}

std::vector<PlanRequest> SmallTensors(const Mesh& mesh, int count) {
  std::vector<PlanRequest> requests;
  for (int i = 0; i < count; ++i) {
    requests.push_back(*ParsePlanRequest(mesh, {256 + 8 * (i % 5), 16 + i % 3},
                                         i % 2 ? "bf16" : "f32", "S(0)", "R",
                                         {}));
  }
  return requests;
}

TEST(PlanBatchServiceTest, ClientBucketsEqualTheOfflineCore) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const Mesh mesh = MakeMesh({4});
  const std::vector<PlanRequest> requests = SmallTensors(mesh, 200);
  const BatchOptions options{64 << 10, false};
  absl::StatusOr<BatchPlan> remote =
      client->PlanBatchBucketed(mesh, requests, options);
  ASSERT_TRUE(remote.ok()) << remote.status();
  std::vector<absl::StatusOr<PlanRequest>> items(requests.begin(),
                                                 requests.end());
  PlanCache cache(8);
  absl::StatusOr<BatchPlan> local = PlanBatch(mesh, items, options, cache);
  ASSERT_TRUE(local.ok());
  ASSERT_EQ(remote->schedule.buckets.size(), local->schedule.buckets.size());
  ASSERT_GT(remote->schedule.buckets.size(), 1u);  // the 64 KiB cap bites
  for (size_t b = 0; b < local->schedule.buckets.size(); ++b) {
    EXPECT_EQ(BucketJson(mesh, remote->schedule.buckets[b]),
              BucketJson(mesh, local->schedule.buckets[b]));
  }
  EXPECT_EQ(remote->schedule.collectives_before, 200);
  EXPECT_DOUBLE_EQ(remote->schedule.time_us_after,
                   local->schedule.time_us_after);
  // 5 shapes x 3 x 2 dtypes: 30 distinct requests, the rest from the cache.
  int hits = 0;
  for (const auto& p : remote->plans) hits += p->cache_hit;
  EXPECT_EQ(hits, 170);
}

TEST(PlanBatchServiceTest, TheOldClientCallStaysAllOrNothing) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const Mesh mesh = MakeMesh({2});
  std::vector<PlanRequest> requests = SmallTensors(mesh, 3);
  absl::StatusOr<std::vector<Plan>> plans = client->PlanBatch(mesh, requests);
  ASSERT_TRUE(plans.ok()) << plans.status();
  EXPECT_EQ(plans->size(), 3u);
  PlanOptions torch;
  torch.planner = PlannerKind::kTorchGreedy;
  requests.push_back(
      *ParsePlanRequest(mesh, {8}, "f32", "P(sum)", "P(avg)", torch));
  for (PlanRequest& r : requests) r.options = torch;
  plans = client->PlanBatch(mesh, requests);
  EXPECT_EQ(plans.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(plans.status().message().rfind("items[3].", 0), 0u)
      << plans.status();
  absl::StatusOr<BatchPlan> batch =
      client->PlanBatchBucketed(mesh, requests, {});
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->ItemErrors(), 1);
  EXPECT_EQ(batch->plans[3].status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PlanBatchServiceTest, ABudgetOverflowDegradesItemsNotTheBatch) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const Mesh mesh = MakeMesh({2, 2, 2});
  PlanOptions tiny;
  tiny.search_budget = 1;
  std::vector<PlanRequest> requests;
  for (int i = 0; i < 4; ++i) {
    requests.push_back(*ParsePlanRequest(
        mesh, {8, 8 + i}, "f32", "S(0),S(1),P(sum)", "S(1),R,S(0)", tiny));
  }
  absl::StatusOr<BatchPlan> batch =
      client->PlanBatchBucketed(mesh, requests, {});
  ASSERT_TRUE(batch.ok()) << batch.status();
  for (const auto& plan : batch->plans) {
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_FALSE(plan->warnings.empty());
    EXPECT_EQ(plan->warnings[0].code, WarningCode::kSearchBudgetExceeded);
  }
}

}  // namespace
}  // namespace reshard::server
