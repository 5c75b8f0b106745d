#include "proto/batch_convert.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/core/field_error.h"
#include "proto/convert.h"

namespace reshard::proto {
namespace {

void BucketToProto(const Mesh& mesh, const Bucket& b, v1::Bucket* out) {
  out->set_op(std::string(StepOpName(b.op)));
  for (int m : b.group) out->add_mesh_dims(m);
  out->set_group(mesh.GroupName(b.group));
  out->set_reduce_op(ReduceOpToProto(b.reduce_op));
  out->set_avg_divisor(b.avg_divisor);
  out->set_bytes(b.bytes);
  out->set_in_bytes(b.in_bytes);
  out->set_out_bytes(b.out_bytes);
  out->set_time_us(b.time_us);
  for (const BucketMember& m : b.members) {
    v1::BucketMember* member = out->add_members();
    member->set_tensor(m.tensor);
    member->set_step(m.step);
  }
}

// Item errors first: they decide which plans are empty on purpose.
absl::Status ErrorsFromProto(const v1::PlanBatchResponse& response,
                             BatchPlan& batch) {
  for (int e = 0; e < response.errors_size(); ++e) {
    const v1::BatchItemError& error = response.errors(e);
    const std::string field = absl::StrCat("errors[", e, "]");
    if (error.item() < 0 ||
        error.item() >= static_cast<int>(batch.plans.size())) {
      return InvalidField(field, absl::StrCat("item ", error.item(),
                                              " is not an item of the batch"));
    }
    if (error.code() == 0) return InvalidField(field, "code OK is no error");
    batch.plans[error.item()] = absl::Status(
        static_cast<absl::StatusCode>(error.code()), error.message());
  }
  return absl::OkStatus();
}

absl::Status PlansFromProto(const Mesh& mesh,
                            const v1::PlanBatchResponse& response,
                            BatchPlan& batch) {
  for (size_t i = 0; i < batch.plans.size(); ++i) {
    if (!batch.plans[i].ok()) continue;
    absl::StatusOr<Plan> plan = PlanFromProto(mesh, response.plans(i));
    if (!plan.ok()) {
      return absl::Status(
          plan.status().code(),
          absl::StrCat("plans[", i, "]: ", plan.status().message()));
    }
    batch.plans[i] = *std::move(plan);
  }
  return absl::OkStatus();
}

// The step a member names, which must be a communicating step of a planned
// item with the bucket's op and group.
absl::StatusOr<const Step*> MemberStep(const Mesh& mesh, const BatchPlan& batch,
                                       const v1::Bucket& bucket,
                                       const v1::BucketMember& m,
                                       const std::string& field) {
  if (m.tensor() < 0 || m.tensor() >= static_cast<int>(batch.plans.size()) ||
      !batch.plans[m.tensor()].ok()) {
    return InvalidField(
        field, absl::StrCat("tensor ", m.tensor(), " is not a planned item"));
  }
  const Plan& plan = *batch.plans[m.tensor()];
  if (m.step() < 0 || m.step() >= static_cast<int>(plan.steps.size()) ||
      !plan.steps[m.step()].IsCommunicating(mesh)) {
    return InvalidField(
        field, absl::StrCat("step ", m.step(), " is not a communicating step"));
  }
  const Step& step = plan.steps[m.step()];
  if (StepOpName(step.op) != bucket.op() ||
      !std::equal(step.group.begin(), step.group.end(),
                  bucket.mesh_dims().begin(), bucket.mesh_dims().end())) {
    return InvalidField(
        field, absl::StrCat("step ", m.step(), " is not an ", bucket.op(),
                            " on ", bucket.group()));
  }
  return &step;
}

absl::StatusOr<Bucket> BucketFromProto(const Mesh& mesh, const BatchPlan& batch,
                                       const v1::Bucket& proto,
                                       const std::string& field) {
  Bucket bucket;
  if (proto.members_size() == 0) return InvalidField(field, "no members");
  for (int k = 0; k < proto.members_size(); ++k) {
    absl::StatusOr<const Step*> step =
        MemberStep(mesh, batch, proto, proto.members(k),
                   absl::StrCat(field, ".members[", k, "]"));
    if (!step.ok()) return step.status();
    if (k == 0) {
      bucket.op = (*step)->op;
      bucket.group = (*step)->group;
      if (bucket.Reduces()) {
        bucket.reduce_op = (*step)->reduce_op;
        bucket.avg_divisor = (*step)->avg_divisor;
      }
    }
    bucket.members.push_back(
        {proto.members(k).tensor(), proto.members(k).step()});
  }
  bucket.bytes = proto.bytes();
  bucket.in_bytes = proto.in_bytes();
  bucket.out_bytes = proto.out_bytes();
  bucket.time_us = proto.time_us();
  return bucket;
}

}  // namespace

BatchOptions BatchOptionsFromProto(const v1::PlanBatchRequest& request) {
  BatchOptions options;
  if (request.has_bucket_bytes()) options.bucket_bytes = request.bucket_bytes();
  options.all_or_nothing = request.all_or_nothing();
  return options;
}

void BatchOptionsToProto(const BatchOptions& options,
                         v1::PlanBatchRequest* request) {
  request->set_bucket_bytes(options.bucket_bytes);
  request->set_all_or_nothing(options.all_or_nothing);
}

void BatchPlanToProto(const Mesh& mesh, const BatchPlan& batch,
                      const std::string& mesh_id,
                      v1::PlanBatchResponse* response) {
  for (size_t i = 0; i < batch.plans.size(); ++i) {
    v1::Plan* plan = response->add_plans();
    if (batch.plans[i].ok()) {
      PlanToProto(mesh, *batch.plans[i], plan);
      plan->set_mesh_id(mesh_id);
      continue;
    }
    v1::BatchItemError* error = response->add_errors();
    error->set_item(static_cast<int>(i));
    error->set_code(static_cast<int>(batch.plans[i].status().code()));
    error->set_message(std::string(batch.plans[i].status().message()));
  }
  for (const Bucket& b : batch.schedule.buckets) {
    BucketToProto(mesh, b, response->add_buckets());
  }
  const BucketSchedule& s = batch.schedule;
  response->set_collectives_before(s.collectives_before);
  response->set_collectives_after(s.collectives_after);
  response->set_time_us_before(s.time_us_before);
  response->set_time_us_after(s.time_us_after);
  response->set_peak_bytes(s.peak_bytes);
}

absl::StatusOr<BatchPlan> BatchPlanFromProto(
    const Mesh& mesh, const v1::PlanBatchResponse& response, int items) {
  if (response.plans_size() != items) {
    return InvalidField("plans", absl::StrCat(response.plans_size(),
                                              " plans for ", items, " items"));
  }
  BatchPlan batch;
  batch.plans.assign(items, Plan());
  if (absl::Status s = ErrorsFromProto(response, batch); !s.ok()) return s;
  if (absl::Status s = PlansFromProto(mesh, response, batch); !s.ok()) {
    return s;
  }
  for (int b = 0; b < response.buckets_size(); ++b) {
    absl::StatusOr<Bucket> bucket = BucketFromProto(
        mesh, batch, response.buckets(b), absl::StrCat("buckets[", b, "]"));
    if (!bucket.ok()) return bucket.status();
    batch.schedule.buckets.push_back(*std::move(bucket));
  }
  batch.schedule.collectives_before = response.collectives_before();
  batch.schedule.collectives_after = response.collectives_after();
  batch.schedule.time_us_before = response.time_us_before();
  batch.schedule.time_us_after = response.time_us_after();
  batch.schedule.peak_bytes = response.peak_bytes();
  return batch;
}

}  // namespace reshard::proto
