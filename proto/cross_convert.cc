#include "proto/cross_convert.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/cross/layout_digest.h"
#include "planner/cross/transfer.h"
#include "proto/convert.h"

namespace reshard::proto {
namespace {

TransferBytes TransferBytesFromProto(const v1::TransferBytes& proto) {
  return {proto.max_send(), proto.mean_send(), proto.max_recv()};
}

void TransferBytesToProto(const TransferBytes& bytes, v1::TransferBytes* out) {
  out->set_max_send(bytes.max_send);
  out->set_mean_send(bytes.mean_send);
  out->set_max_recv(bytes.max_recv);
}

v1::Transfer TransferToProto(const Transfer& t) {
  v1::Transfer proto;
  proto.set_from(t.from);
  proto.set_to(t.to);
  for (int64_t o : t.offset) proto.add_offset(o);
  for (int64_t e : t.extent) proto.add_extent(e);
  return proto;
}

Transfer TransferFromProto(const v1::Transfer& proto) {
  return {proto.from(),
          proto.to(),
          {proto.offset().begin(), proto.offset().end()},
          {proto.extent().begin(), proto.extent().end()}};
}

// The plan's scalar fields and its sender rule's inputs, from `proto`.
void FieldsFromProto(const v1::CrossMeshPlan& proto, CrossMeshPlan& plan) {
  plan.unavailable_ranks.assign(proto.sender_rule().unavailable_ranks().begin(),
                                proto.sender_rule().unavailable_ranks().end());
  plan.cross_link = LinkFromProto(proto.sender_rule().cross_link());
  plan.transfer_time_us = proto.transfer_time_us();
  plan.total_time_us = proto.total_time_us();
  plan.total_bytes = proto.total_bytes();
  plan.peak_bytes = proto.peak_bytes();
  plan.bytes_by_rank = TransferBytesFromProto(proto.bytes_by_rank());
  plan.planning_us = proto.planning_us();
  for (const v1::Transfer& t : proto.transfers()) {
    plan.transfers.push_back(TransferFromProto(t));
  }
}

}  // namespace

absl::StatusOr<CrossMeshRequest> CrossRequestFromProto(
    const Mesh& src_mesh, const Mesh& dst_mesh,
    const v1::PlanCrossMeshRequest& proto, int64_t default_budget) {
  absl::StatusOr<PlanRequest> on_src =
      PlanRequestFromProto(src_mesh, proto.tensor(), proto.src(), proto.src(),
                           proto.options(), default_budget);
  if (!on_src.ok()) return on_src.status();
  absl::StatusOr<PlanRequest> on_dst =
      PlanRequestFromProto(dst_mesh, proto.tensor(), proto.dst(), proto.dst(),
                           proto.options(), default_budget);
  if (!on_dst.ok()) return on_dst.status();
  CrossMeshRequest request{
      on_src->tensor,
      on_src->src,
      on_dst->dst,
      {proto.unavailable_ranks().begin(), proto.unavailable_ranks().end()},
      LinkFromProto(proto.cross_link()),
      on_src->options};
  absl::Status s = ValidateCrossMeshRequest(src_mesh, dst_mesh, request);
  if (!s.ok()) return s;
  return request;
}

v1::PlanCrossMeshRequest CrossRequestToProto(const Mesh& src_mesh,
                                             const Mesh& dst_mesh,
                                             const CrossMeshRequest& request) {
  v1::PlanCrossMeshRequest proto;
  *proto.mutable_src_mesh() = MeshToProto(src_mesh);
  *proto.mutable_dst_mesh() = MeshToProto(dst_mesh);
  *proto.mutable_tensor() = TensorToProto(request.tensor);
  *proto.mutable_src() = StateToProto(request.src);
  *proto.mutable_dst() = StateToProto(request.dst);
  for (int64_t r : request.unavailable_ranks) proto.add_unavailable_ranks(r);
  *proto.mutable_cross_link() = LinkToProto(request.cross_link);
  *proto.mutable_options() = OptionsToProto(request.options);
  return proto;
}

void CrossPlanToProto(const Mesh& src_mesh, const Mesh& dst_mesh,
                      const CrossMeshPlan& plan, int64_t max_listed,
                      v1::CrossMeshPlan* proto) {
  *proto->mutable_src_mesh() = MeshToProto(src_mesh);
  *proto->mutable_dst_mesh() = MeshToProto(dst_mesh);
  *proto->mutable_tensor() = TensorToProto(plan.tensor);
  proto->set_src(plan.src.ToString());
  proto->set_dst(plan.dst.ToString());
  proto->set_src_mid(plan.src_mid.ToString());
  proto->set_dst_mid(plan.dst_mid.ToString());
  PlanToProto(src_mesh, plan.pre, proto->mutable_pre());
  PlanToProto(dst_mesh, plan.post, proto->mutable_post());
  const int64_t count = static_cast<int64_t>(plan.transfers.size());
  if (count > max_listed) {
    proto->set_transfers_omitted(count);
  } else {
    for (const Transfer& t : plan.transfers) {
      *proto->add_transfers() = TransferToProto(t);
    }
  }
  proto->set_transfer_time_us(plan.transfer_time_us);
  proto->set_total_time_us(plan.total_time_us);
  proto->set_total_bytes(plan.total_bytes);
  proto->set_peak_bytes(plan.peak_bytes);
  TransferBytesToProto(plan.bytes_by_rank, proto->mutable_bytes_by_rank());
  v1::SenderRule* rule = proto->mutable_sender_rule();
  rule->set_name(kSenderRuleName);
  for (int64_t r : plan.unavailable_ranks) rule->add_unavailable_ranks(r);
  *rule->mutable_cross_link() = LinkToProto(plan.cross_link);
  proto->set_layout_digest(DigestHex(plan.layout_digest));
  *proto->mutable_warnings() = proto->pre().warnings();
  proto->mutable_warnings()->MergeFrom(proto->post().warnings());
  proto->set_planning_us(plan.planning_us);
}

absl::StatusOr<CrossPlanWithMeshes> CrossPlanFromProto(
    const v1::CrossMeshPlan& proto) {
  absl::StatusOr<Mesh> src_mesh = MeshFromProto(proto.src_mesh());
  if (!src_mesh.ok()) return src_mesh.status();
  absl::StatusOr<Mesh> dst_mesh = MeshFromProto(proto.dst_mesh());
  if (!dst_mesh.ok()) return dst_mesh.status();
  absl::StatusOr<Plan> pre = PlanFromProto(*src_mesh, proto.pre());
  if (!pre.ok()) return pre.status();
  absl::StatusOr<Plan> post = PlanFromProto(*dst_mesh, proto.post());
  if (!post.ok()) return post.status();
  CrossMeshPlan plan{pre->tensor, pre->src, post->dst, pre->dst,
                     post->src,   *pre,     *post};
  FieldsFromProto(proto, plan);
  plan.warnings = pre->warnings;
  plan.warnings.insert(plan.warnings.end(), post->warnings.begin(),
                       post->warnings.end());
  plan.layout_digest =
      LayoutDigest(*src_mesh, *dst_mesh, plan.tensor, plan.src, plan.dst);
  if (DigestHex(plan.layout_digest) != proto.layout_digest()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan.layout_digest: ", proto.layout_digest().substr(0, 16),
        " does not match the plan's meshes, tensor and states (",
        DigestHex(plan.layout_digest), ")"));
  }
  if (proto.transfers_omitted() > 0) {
    absl::StatusOr<std::vector<Transfer>> transfers =
        ExpandTransfers({*src_mesh, *dst_mesh, plan.tensor.shape(),
                         plan.src_mid, plan.dst_mid, plan.unavailable_ranks});
    if (!transfers.ok()) return transfers.status();
    plan.transfers = *std::move(transfers);
  }
  return CrossPlanWithMeshes{*std::move(src_mesh), *std::move(dst_mesh),
                             std::move(plan)};
}

namespace {

void CrossBucketToProto(const CrossBucket& bucket, v1::CrossBucket* out) {
  for (const auto& [tensor, transfer] : bucket.members) {
    v1::CrossBucketMember* m = out->add_members();
    m->set_tensor(tensor);
    m->set_transfer(transfer);
  }
  out->set_bytes(bucket.bytes);
  out->set_max_rank_bytes(bucket.max_rank_bytes);
  out->set_messages(bucket.messages);
  out->set_time_us(bucket.time_us);
}

CrossBucket CrossBucketFromProto(const v1::CrossBucket& proto) {
  CrossBucket bucket;
  for (const v1::CrossBucketMember& m : proto.members()) {
    bucket.members.emplace_back(m.tensor(), m.transfer());
  }
  bucket.bytes = proto.bytes();
  bucket.max_rank_bytes = proto.max_rank_bytes();
  bucket.messages = proto.messages();
  bucket.time_us = proto.time_us();
  return bucket;
}

// A schedule that only counts its collectives.
BucketSchedule CountedSchedule(int64_t collectives) {
  BucketSchedule schedule;
  schedule.collectives_after = collectives;
  return schedule;
}

}  // namespace

void CrossBatchToProto(const std::vector<const Mesh*>& src_meshes,
                       const Mesh& dst_mesh, const CrossBatchPlan& batch,
                       int64_t max_listed,
                       v1::PlanCrossMeshBatchResponse* proto) {
  const int64_t share =
      max_listed /
      std::max<int64_t>(1, static_cast<int64_t>(batch.plans.size()));
  int64_t pre_collectives = 0;
  for (const BucketSchedule& s : batch.pre_schedules) {
    pre_collectives += s.collectives_after;
  }
  for (size_t t = 0; t < batch.plans.size(); ++t) {
    v1::CrossMeshPlan* plan = proto->add_plans();
    if (batch.plans[t].ok()) {
      CrossPlanToProto(*src_meshes[t], dst_mesh, *batch.plans[t], share, plan);
      continue;
    }
    v1::BatchItemError* error = proto->add_errors();
    error->set_item(static_cast<int>(t));
    error->set_code(static_cast<int>(batch.plans[t].status().code()));
    error->set_message(std::string(batch.plans[t].status().message()));
  }
  for (const CrossBucket& b : batch.buckets) {
    CrossBucketToProto(b, proto->add_buckets());
  }
  proto->set_pre_collectives(pre_collectives);
  proto->set_post_collectives(batch.post_schedule.collectives_after);
  proto->set_pre_time_us(batch.pre_time_us);
  proto->set_transfer_time_us(batch.transfer_time_us);
  proto->set_post_time_us(batch.post_time_us);
  proto->set_total_time_us(batch.total_time_us);
  proto->set_total_bytes(batch.total_bytes);
  TransferBytesToProto(batch.bytes_by_rank, proto->mutable_bytes_by_rank());
  proto->set_planning_us(batch.planning_us);
}

absl::StatusOr<CrossBatchPlan> CrossBatchFromProto(
    const v1::PlanCrossMeshBatchResponse& proto) {
  CrossBatchPlan batch;
  std::vector<absl::Status> errors(proto.plans_size());
  for (const v1::BatchItemError& e : proto.errors()) {
    if (e.item() < 0 || e.item() >= proto.plans_size()) continue;
    errors[e.item()] =
        absl::Status(static_cast<absl::StatusCode>(e.code()), e.message());
  }
  for (int t = 0; t < proto.plans_size(); ++t) {
    if (!errors[t].ok()) {
      batch.plans.push_back(errors[t]);
      continue;
    }
    absl::StatusOr<CrossPlanWithMeshes> plan =
        CrossPlanFromProto(proto.plans(t));
    if (!plan.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("plans[", t, "]: ", plan.status().message()));
    }
    batch.plans.push_back(std::move(plan->plan));
  }
  for (const v1::CrossBucket& b : proto.buckets()) {
    batch.buckets.push_back(CrossBucketFromProto(b));
  }
  batch.pre_schedules.push_back(CountedSchedule(proto.pre_collectives()));
  batch.post_schedule = CountedSchedule(proto.post_collectives());
  batch.pre_time_us = proto.pre_time_us();
  batch.transfer_time_us = proto.transfer_time_us();
  batch.post_time_us = proto.post_time_us();
  batch.total_time_us = proto.total_time_us();
  batch.total_bytes = proto.total_bytes();
  batch.bytes_by_rank = TransferBytesFromProto(proto.bytes_by_rank());
  batch.planning_us = proto.planning_us();
  return batch;
}

}  // namespace reshard::proto
