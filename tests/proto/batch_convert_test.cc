// PlanBatch's wire form (proto/batch_convert.h): options, a batch with
// item errors and buckets round-trips, and a response whose buckets name
// steps that are not there (or not of their op) is refused naming the
// field.
#include "proto/batch_convert.h"

#include "gtest/gtest.h"
#include "planner/format/batch_format.h"
#include "planner/search/plan_cache.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using testing::MakeMesh;

BatchPlan TestBatch(const Mesh& mesh) {
  std::vector<absl::StatusOr<PlanRequest>> requests;
  for (const char* src : {"P(avg),R", "S(5),R", "S(0),R", "P(avg),S(0)"}) {
    requests.push_back(ParsePlanRequest(mesh, {6, 4}, "f32", src, "R,R", {}));
  }
  PlanCache cache(8);
  return *PlanBatch(mesh, requests, {}, cache);
}

TEST(BatchConvertTest, OptionsRoundTripAndDefault) {
  v1::PlanBatchRequest request;
  BatchOptions defaults = proto::BatchOptionsFromProto(request);
  EXPECT_EQ(defaults.bucket_bytes, kDefaultBucketBytes);
  EXPECT_FALSE(defaults.all_or_nothing);
  proto::BatchOptionsToProto({1234, true}, &request);
  const BatchOptions back = proto::BatchOptionsFromProto(request);
  EXPECT_EQ(back.bucket_bytes, 1234);
  EXPECT_TRUE(back.all_or_nothing);
  request.set_bucket_bytes(0);  // set: the core refuses it, not a default
  EXPECT_EQ(proto::BatchOptionsFromProto(request).bucket_bytes, 0);
}

TEST(BatchConvertTest, BatchRoundTripsWithErrorsAndBuckets) {
  const Mesh mesh = MakeMesh({2, 2});
  const BatchPlan batch = TestBatch(mesh);
  ASSERT_EQ(batch.ItemErrors(), 1);
  v1::PlanBatchResponse response;
  proto::BatchPlanToProto(mesh, batch, "mesh-1", &response);
  ASSERT_EQ(response.plans_size(), 4);
  EXPECT_EQ(response.plans(0).mesh_id(), "mesh-1");
  ASSERT_EQ(response.errors_size(), 1);
  EXPECT_EQ(response.errors(0).item(), 1);
  EXPECT_EQ(response.errors(0).code(), 3);  // INVALID_ARGUMENT
  absl::StatusOr<BatchPlan> back = proto::BatchPlanFromProto(mesh, response, 4);
  ASSERT_TRUE(back.ok()) << back.status();
  // The batch's JSON is the same on both sides of the wire.
  EXPECT_EQ(BatchJson(mesh, *back), BatchJson(mesh, batch));
  EXPECT_EQ(back->plans[1].status(), batch.plans[1].status());
  EXPECT_EQ(back->schedule.buckets[0].in_bytes,
            batch.schedule.buckets[0].in_bytes);
  EXPECT_EQ(back->schedule.buckets[0].time_us,
            batch.schedule.buckets[0].time_us);
}

TEST(BatchConvertTest, InconsistentResponsesAreRefusedNamingTheField) {
  const Mesh mesh = MakeMesh({2, 2});
  v1::PlanBatchResponse good;
  proto::BatchPlanToProto(mesh, TestBatch(mesh), "m", &good);
  ASSERT_GE(good.buckets_size(), 1);
  ASSERT_EQ(good.buckets(0).op(), "all_reduce");
  struct Case {
    const char* message;
    std::function<void(v1::PlanBatchResponse&)> mutate;
    int items = 4;
  };
  const Case cases[] = {
      {"plans: 4 plans for 5 items", [](auto&) {}, 5},
      {"errors[0]: item 9 is not an item of the batch",
       [](auto& r) { r.mutable_errors(0)->set_item(9); }},
      {"errors[0]: code OK is no error",
       [](auto& r) { r.mutable_errors(0)->set_code(0); }},
      {"buckets[0].members[0]: tensor 1 is not a planned item",
       [](auto& r) {
         r.mutable_buckets(0)->mutable_members(0)->set_tensor(1);
       }},
      {"buckets[0].members[0]: step 7 is not a communicating step",
       [](auto& r) { r.mutable_buckets(0)->mutable_members(0)->set_step(7); }},
      {"buckets[0].members[0]: step 0 is not an all_gather on A",
       [](auto& r) { r.mutable_buckets(0)->set_op("all_gather"); }},
      {"buckets[0]: no members",
       [](auto& r) { r.mutable_buckets(0)->clear_members(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    v1::PlanBatchResponse r = good;
    c.mutate(r);
    absl::StatusOr<BatchPlan> back =
        proto::BatchPlanFromProto(mesh, r, c.items);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(back.status().message(), c.message);
  }
}

}  // namespace
}  // namespace reshard
