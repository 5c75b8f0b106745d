#include "proto/convert.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/echoed_text.h"
#include "common/fnv1a.h"
#include "common/run_failure.h"
#include "planner/core/field_error.h"
#include "planner/core/state_text.h"
#include "planner/format/plan_format.h"
#include "reshard/v1/coordinator.pb.h"

namespace reshard::proto {
namespace {

ReduceOp FromProto(v1::ReduceOp op) {
  switch (op) {
    case v1::REDUCE_OP_AVG:
      return ReduceOp::kAvg;
    case v1::REDUCE_OP_MAX:
      return ReduceOp::kMax;
    case v1::REDUCE_OP_MIN:
      return ReduceOp::kMin;
    default:
      return ReduceOp::kSum;
  }
}

v1::ReduceOp ToProto(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAvg:
      return v1::REDUCE_OP_AVG;
    case ReduceOp::kMax:
      return v1::REDUCE_OP_MAX;
    case ReduceOp::kMin:
      return v1::REDUCE_OP_MIN;
    case ReduceOp::kSum:
      break;
  }
  return v1::REDUCE_OP_SUM;
}

absl::StatusOr<TensorSpec> TensorFromProto(const v1::Tensor& proto) {
  absl::StatusOr<DType> dtype = DTypeFromProto(proto.dtype());
  if (!dtype.ok()) return dtype.status();
  return TensorSpec::Create({proto.shape().begin(), proto.shape().end()},
                            *dtype);
}

absl::StatusOr<DistState> StateFromProto(const v1::DistState& proto,
                                         const Mesh& mesh, int tensor_rank,
                                         absl::string_view field) {
  if (proto.placements().empty()) {
    if (proto.text().empty()) {
      return InvalidField(field, "needs placements or text");
    }
    return ParseDistState(proto.text(), mesh.ndim(), tensor_rank, field);
  }
  if (proto.placements_size() != mesh.ndim()) {
    return InvalidField(field, absl::StrCat("has ", proto.placements_size(),
                                            " placements for a mesh of ",
                                            mesh.ndim(), " dims"));
  }
  std::vector<Placement> placements;
  for (int m = 0; m < proto.placements_size(); ++m) {
    const v1::Placement& p = proto.placements(m);
    const std::string pfield = absl::StrCat(field, ".placements[", m, "]");
    switch (p.kind_case()) {
      case v1::Placement::kReplicate:
        placements.push_back(Placement::Replicate());
        break;
      case v1::Placement::kShard: {
        absl::StatusOr<int> dim =
            NormalizeShardDim(p.shard().dim(), tensor_rank, pfield);
        if (!dim.ok()) return dim.status();
        placements.push_back(Placement::Shard(*dim));
        break;
      }
      case v1::Placement::kPartial:
        if (!v1::ReduceOp_IsValid(p.partial().op())) {
          return InvalidField(pfield, absl::StrCat("unknown reduce op value ",
                                                   p.partial().op()));
        }
        placements.push_back(Placement::Partial(FromProto(p.partial().op())));
        break;
      default:
        return InvalidField(pfield, "placement kind is not set");
    }
  }
  std::vector<ShardOrderEntry> order;
  for (const v1::ShardOrderEntry& e : proto.shard_order()) {
    order.push_back(
        {e.tensor_dim(), {e.mesh_dims().begin(), e.mesh_dims().end()}});
  }
  return DistState::Create(placements, order, tensor_rank, field);
}

}  // namespace

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_UNSPECIFIED:
    case v1::DTYPE_FLOAT32:
      return DType::kFloat32;
    case v1::DTYPE_FLOAT64:
      return DType::kFloat64;
    case v1::DTYPE_BFLOAT16:
      return DType::kBFloat16;
    case v1::DTYPE_FLOAT16:
      return DType::kFloat16;
    case v1::DTYPE_INT32:
      return DType::kInt32;
    case v1::DTYPE_INT64:
      return DType::kInt64;
    default:
      break;
  }
  return InvalidField("tensor.dtype",
                      absl::StrCat("unknown dtype value ", dtype));
}

v1::DType DTypeToProto(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return v1::DTYPE_FLOAT64;
    case DType::kBFloat16:
      return v1::DTYPE_BFLOAT16;
    case DType::kFloat16:
      return v1::DTYPE_FLOAT16;
    case DType::kInt32:
      return v1::DTYPE_INT32;
    case DType::kInt64:
      return v1::DTYPE_INT64;
    case DType::kFloat32:
      break;
  }
  return v1::DTYPE_FLOAT32;
}

grpc::Status StatusToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const std::vector<RankFailure> ranks = RankFailuresOf(status);
  std::string details;
  if (!ranks.empty()) {
    v1::RunFailure failure;
    for (const RankFailure& f : ranks) {
      v1::RankFailure* rank = failure.add_ranks();
      rank->set_rank(f.rank);
      rank->set_host(BoundedMessage(f.host));
      rank->set_kind(f.kind);
      rank->set_message(BoundedMessage(f.message));
    }
    details = failure.SerializeAsString();
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      BoundedMessage(status.message()), details);
}

absl::Status StatusFromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const absl::Status converted(
      static_cast<absl::StatusCode>(status.error_code()),
      status.error_message());
  v1::RunFailure failure;
  if (status.error_details().empty() ||
      !failure.ParseFromString(status.error_details())) {
    return converted;
  }
  std::vector<RankFailure> ranks;
  for (const v1::RankFailure& rank : failure.ranks()) {
    ranks.push_back({rank.rank(), rank.host(), rank.kind(), rank.message()});
  }
  return WithRankFailures(converted, ranks);
}

LinkParams LinkFromProto(const v1::LinkParams& proto) {
  LinkParams link;
  if (proto.has_bandwidth_gbps()) link.bandwidth_gbps = proto.bandwidth_gbps();
  if (proto.has_latency_us()) link.latency_us = proto.latency_us();
  if (proto.has_all_to_all_us()) link.all_to_all_us = proto.all_to_all_us();
  return link;
}

v1::LinkParams LinkToProto(const LinkParams& link) {
  v1::LinkParams proto;
  if (link.bandwidth_gbps.has_value()) {
    proto.set_bandwidth_gbps(*link.bandwidth_gbps);
  }
  if (link.latency_us.has_value()) proto.set_latency_us(*link.latency_us);
  if (link.all_to_all_us.has_value()) {
    proto.set_all_to_all_us(*link.all_to_all_us);
  }
  return proto;
}

MeshSpec MeshSpecFromProto(const v1::Mesh& proto) {
  MeshSpec spec;
  spec.shape.assign(proto.shape().begin(), proto.shape().end());
  spec.dim_names.assign(proto.dim_names().begin(), proto.dim_names().end());
  spec.rank_map.assign(proto.rank_map().begin(), proto.rank_map().end());
  bool group_links = false;
  for (const v1::FlattenedGroup& g : proto.flattened()) {
    spec.flattened.emplace_back(g.dims().begin(), g.dims().end());
    group_links = group_links || g.has_link();
  }
  for (const v1::FlattenedGroup& g : proto.flattened()) {
    if (group_links) spec.flattened_links.push_back(LinkFromProto(g.link()));
  }
  for (const v1::LinkParams& l : proto.links()) {
    spec.links.push_back(LinkFromProto(l));
  }
  if (proto.has_copy_gbps()) spec.copy_gbps = proto.copy_gbps();
  if (proto.has_base_us()) spec.base_us = proto.base_us();
  if (proto.has_reduce_gbps()) spec.reduce_gbps = proto.reduce_gbps();
  return spec;
}

absl::StatusOr<Mesh> MeshFromProto(const v1::Mesh& proto) {
  // Refuse absurd sizes before allocating anything for them.
  if (proto.rank_map_size() > kMaxWorldSize) {
    return InvalidField("mesh.rank_map", "too many ranks");
  }
  return Mesh::Create(MeshSpecFromProto(proto));
}

v1::Mesh MeshToProto(const Mesh& mesh) {
  v1::Mesh proto;
  for (int64_t s : mesh.shape()) proto.add_shape(s);
  for (const std::string& n : mesh.dim_names()) proto.add_dim_names(n);
  for (int64_t r : mesh.rank_map()) proto.add_rank_map(r);
  for (size_t f = 0; f < mesh.flattened().size(); ++f) {
    v1::FlattenedGroup* group = proto.add_flattened();
    for (int d : mesh.flattened()[f]) group->add_dims(mesh.dim_names()[d]);
    const LinkParams& own = mesh.flattened_links()[f];
    if (own != LinkParams{}) *group->mutable_link() = LinkToProto(own);
  }
  bool any_link = false;
  for (const LinkParams& l : mesh.links()) {
    any_link = any_link || l != LinkParams{};
  }
  if (any_link) {
    for (const LinkParams& l : mesh.links()) {
      *proto.add_links() = LinkToProto(l);
    }
  }
  if (mesh.copy_gbps().has_value()) proto.set_copy_gbps(*mesh.copy_gbps());
  if (mesh.base_us().has_value()) proto.set_base_us(*mesh.base_us());
  if (mesh.reduce_gbps().has_value()) {
    proto.set_reduce_gbps(*mesh.reduce_gbps());
  }
  return proto;
}

std::string MeshId(const Mesh& mesh) {
  return absl::StrFormat("mesh-%016x", Fnv1a64(mesh.CanonicalText(true)));
}

absl::StatusOr<PlannerKind> PlannerFromProto(v1::PlannerKind planner) {
  switch (planner) {
    case v1::PLANNER_KIND_UNSPECIFIED:
    case v1::PLANNER_KIND_OPTIMAL:
      return PlannerKind::kOptimal;
    case v1::PLANNER_KIND_TORCH_GREEDY:
      return PlannerKind::kTorchGreedy;
    case v1::PLANNER_KIND_TORCH_GRAPH:
      return PlannerKind::kTorchGraph;
    default:
      break;
  }
  return InvalidField("options.planner",
                      absl::StrCat("unknown planner value ", planner));
}

namespace {

absl::StatusOr<CostModelKind> CostModelFromProto(v1::CostModel model) {
  switch (model) {
    case v1::COST_MODEL_UNSPECIFIED:
    case v1::COST_MODEL_ALPHA_BETA:
      return CostModelKind::kAlphaBeta;
    case v1::COST_MODEL_TORCH:
      return CostModelKind::kTorch;
    default:
      break;
  }
  return InvalidField("options.cost_model",
                      absl::StrCat("unknown cost model value ", model));
}

absl::StatusOr<FlattenPolicy> FlattenPolicyFromProto(v1::FlattenPolicy policy) {
  switch (policy) {
    case v1::FLATTEN_POLICY_UNSPECIFIED:
    case v1::FLATTEN_POLICY_EXISTING:
      return FlattenPolicy::kExisting;
    case v1::FLATTEN_POLICY_ANY:
      return FlattenPolicy::kAny;
    case v1::FLATTEN_POLICY_NONE:
      return FlattenPolicy::kNone;
    default:
      break;
  }
  return InvalidField("options.flatten_policy",
                      absl::StrCat("unknown flatten policy value ", policy));
}

absl::StatusOr<PlanOptions> OptionsFromProto(const v1::PlanOptions& options,
                                             int64_t default_budget) {
  PlanOptions o;
  absl::StatusOr<PlannerKind> planner = PlannerFromProto(options.planner());
  if (!planner.ok()) return planner.status();
  o.planner = *planner;
  absl::StatusOr<CostModelKind> model =
      CostModelFromProto(options.cost_model());
  if (!model.ok()) return model.status();
  o.cost_model = *model;
  absl::StatusOr<FlattenPolicy> policy =
      FlattenPolicyFromProto(options.flatten_policy());
  if (!policy.ok()) return policy.status();
  o.flatten_policy = *policy;
  o.merge = options.merge();
  if (options.devices_per_host() != 0)
    o.devices_per_host = options.devices_per_host();
  o.search_budget =
      options.search_budget() != 0 ? options.search_budget() : default_budget;
  if (options.has_max_peak_bytes()) o.max_peak_bytes = options.max_peak_bytes();
  return o;
}

}  // namespace

absl::StatusOr<PlanRequest> PlanRequestFromProto(const Mesh& mesh,
                                                 const v1::Tensor& tensor,
                                                 const v1::DistState& src,
                                                 const v1::DistState& dst,
                                                 const v1::PlanOptions& options,
                                                 int64_t default_budget) {
  absl::StatusOr<TensorSpec> spec = TensorFromProto(tensor);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<DistState> src_state =
      StateFromProto(src, mesh, spec->rank(), "src");
  if (!src_state.ok()) return src_state.status();
  absl::StatusOr<DistState> dst_state =
      StateFromProto(dst, mesh, spec->rank(), "dst");
  if (!dst_state.ok()) return dst_state.status();
  absl::StatusOr<PlanOptions> o = OptionsFromProto(options, default_budget);
  if (!o.ok()) return o.status();
  return PlanRequest{*std::move(spec), *src_state, *dst_state, *o};
}

v1::Tensor TensorToProto(const TensorSpec& tensor) {
  v1::Tensor proto;
  for (int64_t s : tensor.shape()) proto.add_shape(s);
  proto.set_dtype(DTypeToProto(tensor.dtype()));
  return proto;
}

v1::DistState StateToProto(const DistState& state) {
  v1::DistState proto;
  for (int m = 0; m < state.mesh_ndim(); ++m) {
    const Placement& p = state.placement(m);
    v1::Placement* out = proto.add_placements();
    if (p.is_shard()) {
      out->mutable_shard()->set_dim(p.dim());
    } else if (p.is_partial()) {
      out->mutable_partial()->set_op(ToProto(p.op()));
    } else {
      out->mutable_replicate();
    }
  }
  for (const ShardOrderEntry& e : state.ShardOrderEntries()) {
    v1::ShardOrderEntry* entry = proto.add_shard_order();
    entry->set_tensor_dim(e.tensor_dim);
    for (int m : e.mesh_dims) entry->add_mesh_dims(m);
  }
  return proto;
}

v1::PlanOptions OptionsToProto(const PlanOptions& o) {
  v1::PlanOptions proto;
  switch (o.planner) {
    case PlannerKind::kOptimal:
      proto.set_planner(v1::PLANNER_KIND_OPTIMAL);
      break;
    case PlannerKind::kTorchGreedy:
      proto.set_planner(v1::PLANNER_KIND_TORCH_GREEDY);
      break;
    case PlannerKind::kTorchGraph:
      proto.set_planner(v1::PLANNER_KIND_TORCH_GRAPH);
      break;
  }
  proto.set_cost_model(o.cost_model == CostModelKind::kTorch
                           ? v1::COST_MODEL_TORCH
                           : v1::COST_MODEL_ALPHA_BETA);
  switch (o.flatten_policy) {
    case FlattenPolicy::kExisting:
      proto.set_flatten_policy(v1::FLATTEN_POLICY_EXISTING);
      break;
    case FlattenPolicy::kAny:
      proto.set_flatten_policy(v1::FLATTEN_POLICY_ANY);
      break;
    case FlattenPolicy::kNone:
      proto.set_flatten_policy(v1::FLATTEN_POLICY_NONE);
      break;
  }
  proto.set_merge(o.merge);
  proto.set_devices_per_host(o.devices_per_host);
  proto.set_search_budget(o.search_budget);
  if (o.max_peak_bytes.has_value()) proto.set_max_peak_bytes(*o.max_peak_bytes);
  return proto;
}

v1::ReduceOp ReduceOpToProto(ReduceOp op) { return ToProto(op); }

void PlanToProto(const Mesh& mesh, const Plan& plan, v1::Plan* proto) {
  *proto->mutable_tensor() = TensorToProto(plan.tensor);
  proto->set_src(plan.src.ToString());
  proto->set_dst(plan.dst.ToString());
  proto->set_planner(std::string(PlannerName(plan.planner)));
  proto->set_cost_model(std::string(CostModelName(plan.cost_model)));
  for (const Step& s : plan.steps) {
    v1::Step* step = proto->add_steps();
    step->set_op(std::string(StepOpName(s.op)));
    for (int m : s.group) step->add_mesh_dims(m);
    step->set_group(mesh.GroupName(s.group));
    step->set_reduce_op(ToProto(s.reduce_op));
    step->set_avg_divisor(s.avg_divisor);
    if (s.src_tensor_dim.has_value())
      step->set_src_tensor_dim(*s.src_tensor_dim);
    if (s.dst_tensor_dim.has_value())
      step->set_dst_tensor_dim(*s.dst_tensor_dim);
    step->set_from(s.from.ToString());
    step->set_to(s.to.ToString());
    step->set_bytes(s.bytes);
    step->set_time_us(s.time_us);
  }
  proto->set_trace(PlanTrace(plan));
  proto->set_total_time_us(plan.total_time_us);
  proto->set_total_bytes(plan.total_bytes);
  proto->set_peak_bytes(plan.peak_bytes);
  for (const Warning& w : plan.warnings) {
    v1::Warning* warning = proto->add_warnings();
    warning->set_code(std::string(WarningCodeName(w.code)));
    for (const std::string& d : w.dims) warning->add_dims(d);
    warning->set_message(w.message);
    warning->set_saving_us(w.saving_us);
  }
  proto->set_planning_us(plan.planning_us);
  proto->set_states_expanded(plan.states_expanded);
  proto->set_cache_hit(plan.cache_hit);
}

namespace {

// The planner and cost model a plan names.
absl::Status KindsFromProto(const v1::Plan& proto, Plan& plan) {
  std::optional<PlannerKind> planner = ParsePlanner(proto.planner());
  if (!planner.has_value()) {
    return InvalidField("plan.planner", absl::StrCat("unknown planner \"",
                                                     proto.planner(), "\""));
  }
  plan.planner = *planner;
  std::optional<CostModelKind> model = ParseCostModel(proto.cost_model());
  if (!model.has_value()) {
    return InvalidField(
        "plan.cost_model",
        absl::StrCat("unknown cost model \"", proto.cost_model(), "\""));
  }
  plan.cost_model = *model;
  return absl::OkStatus();
}

// A step, rebuilt from its states and group; its op and avg divisor must
// agree with what they imply.
absl::StatusOr<Step> StepFromProto(const Mesh& mesh, const v1::Step& s,
                                   int rank, const std::string& field) {
  absl::StatusOr<DistState> from =
      ParseDistState(s.from(), mesh.ndim(), rank, field);
  if (!from.ok()) return from.status();
  absl::StatusOr<DistState> to =
      ParseDistState(s.to(), mesh.ndim(), rank, field);
  if (!to.ok()) return to.status();
  absl::StatusOr<Step> step = MakeStep(
      mesh, *from, *to, Group(s.mesh_dims().begin(), s.mesh_dims().end()));
  if (!step.ok()) return step.status();
  if (StepOpName(step->op) != s.op() || step->avg_divisor != s.avg_divisor()) {
    return InvalidField(
        field, absl::StrCat("op ", s.op(), " disagrees with its states"));
  }
  step->bytes = s.bytes();
  step->time_us = s.time_us();
  return step;
}

absl::StatusOr<Warning> WarningFromProto(const v1::Warning& w,
                                         const std::string& field) {
  std::optional<WarningCode> code = ParseWarningCode(w.code());
  if (!code.has_value()) {
    return InvalidField(
        absl::StrCat(field, ".code"),
        absl::StrCat("unknown warning code \"", w.code(), "\""));
  }
  return Warning{
      *code, {w.dims().begin(), w.dims().end()}, w.message(), w.saving_us()};
}

}  // namespace

absl::StatusOr<Plan> PlanFromProto(const Mesh& mesh, const v1::Plan& proto) {
  Plan plan;
  absl::StatusOr<TensorSpec> tensor = TensorFromProto(proto.tensor());
  if (!tensor.ok()) return tensor.status();
  plan.tensor = *std::move(tensor);
  const int rank = plan.tensor.rank();
  absl::StatusOr<DistState> src =
      ParseDistState(proto.src(), mesh.ndim(), rank, "plan.src");
  if (!src.ok()) return src.status();
  absl::StatusOr<DistState> dst =
      ParseDistState(proto.dst(), mesh.ndim(), rank, "plan.dst");
  if (!dst.ok()) return dst.status();
  plan.src = *src;
  plan.dst = *dst;
  if (absl::Status s = KindsFromProto(proto, plan); !s.ok()) return s;
  for (int i = 0; i < proto.steps_size(); ++i) {
    absl::StatusOr<Step> step = StepFromProto(
        mesh, proto.steps(i), rank, absl::StrCat("plan.steps[", i, "]"));
    if (!step.ok()) return step.status();
    plan.steps.push_back(*std::move(step));
  }
  for (int i = 0; i < proto.warnings_size(); ++i) {
    absl::StatusOr<Warning> warning = WarningFromProto(
        proto.warnings(i), absl::StrCat("plan.warnings[", i, "]"));
    if (!warning.ok()) return warning.status();
    plan.warnings.push_back(*std::move(warning));
  }
  plan.total_time_us = proto.total_time_us();
  plan.total_bytes = proto.total_bytes();
  plan.peak_bytes = proto.peak_bytes();
  plan.planning_us = proto.planning_us();
  plan.states_expanded = proto.states_expanded();
  plan.cache_hit = proto.cache_hit();
  return plan;
}

}  // namespace reshard::proto
