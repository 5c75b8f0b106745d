#include "server/planner_service.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "executor/run/cross_program.h"
#include "executor/run/rank_program_json.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_planner.h"
#include "planner/format/cross_plan_format.h"
#include "proto/batch_convert.h"
#include "proto/convert.h"
#include "proto/cross_convert.h"
#include "server/admin_token.h"
#include "server/batch_request.h"
#include "server/caller_credentials.h"
#include "server/cross_mesh_request.h"
#include "server/message_bounds.h"
#include "server/pages.h"
#include "server/service_call.h"
#include "spdlog/spdlog.h"

namespace reshard::server {
namespace {

// The rank programs a Plan call asks for (PlanRequest.program_position).
struct ProgramsAsked {
  std::optional<int64_t> position;  // none: every rank's
};

absl::StatusOr<std::optional<ProgramsAsked>> ProgramsAskedOf(
    const Mesh& mesh, const v1::PlanRequest& request) {
  if (!request.has_program_position()) return std::nullopt;
  const int64_t p = request.program_position();
  const int64_t world = mesh.world_size();
  if (p == -1 && world > executor::kMaxProgramsRanks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "program_position: -1 asks for every rank's programs, and a mesh of ",
        world, " ranks has more than ", executor::kMaxProgramsRanks,
        "; ask for one position's"));
  }
  if (p == -1) return ProgramsAsked{};
  if (p < 0 || p >= world) {
    return absl::InvalidArgumentError(
        absl::StrCat("program_position: ", p,
                     " is not -1 (every rank's) or a "
                     "position of the ",
                     world, "-rank mesh"));
  }
  return ProgramsAsked{p};
}

// The mesh a planning call names and its caller's cache scope, as Plan and
// PlanBatch both take them.
struct ScopedMesh {
  std::shared_ptr<const Mesh> mesh;
  uint64_t scope = 0;
};

template <typename Request>
absl::StatusOr<ScopedMesh> ScopedMeshOf(const MeshRegistry& registry,
                                        const ServiceOptions& options,
                                        const grpc::ServerContextBase& ctx,
                                        const Request& request) {
  absl::StatusOr<std::shared_ptr<const Mesh>> mesh =
      RequestMesh(registry, request);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<std::string> credential = CredentialOf(ctx, options);
  if (!credential.ok()) return credential.status();
  return ScopedMesh{*std::move(mesh), CacheScopeOf(*credential)};
}

// A batch needs the planning pool unless every item's search is light
// (server/request_plan.h); its cache hits are not looked for up front.
bool BatchNeedsPool(const Mesh& mesh, const v1::PlanBatchRequest& request) {
  absl::StatusOr<PlannerKind> planner =
      proto::PlannerFromProto(request.options().planner());
  if (!planner.ok()) return false;  // refused without planning
  for (const v1::PlanBatchRequest::Item& item : request.items()) {
    if (!IsLightSearch(mesh, *planner, item.tensor().shape_size())) {
      return true;
    }
  }
  return false;
}

// The most bytes a rank takes in a reply (a varint below 2^35).
constexpr int64_t kMaxRankBytes = 5;

// Stops searches at the call's deadline or when the client goes away.
StopCheck CallStop(grpc::CallbackServerContext* ctx) {
  return StopAt(ctx->deadline(), [ctx] { return ctx->IsCancelled(); });
}

// Each item of a batch counts as a plan request of the batch's planner; a
// batch is planned as a whole, so each item is given an equal share of its
// time.
void RecordBatch(PlannerMetrics* metrics, const v1::PlanOptions& options,
                 const BatchPlan& batch, double seconds) {
  if (metrics == nullptr || batch.plans.empty()) return;
  absl::StatusOr<PlannerKind> planner =
      proto::PlannerFromProto(options.planner());
  if (!planner.ok()) return;
  const double share = seconds / static_cast<double>(batch.plans.size());
  for (const absl::StatusOr<reshard::Plan>& plan : batch.plans) {
    metrics->RecordPlanned(*planner, plan, share);
  }
}

}  // namespace

PlannerService::PlannerService(MeshRegistry& registry, PlanCache& cache,
                               ServiceOptions options, PlannerMetrics* metrics,
                               PlanningPool* pool)
    : registry_(registry),
      cache_(cache),
      options_(options),
      metrics_(metrics),
      pool_(pool) {
  if (metrics_ == nullptr) return;
  for (size_t i = 0; i < kRpcNames.size(); ++i) {
    rpc_metrics_[i] = &metrics_->rpc().Method(kRpcNames[i]);
  }
}

std::shared_ptr<ServiceCall> PlannerService::Begin(
    grpc::CallbackServerContext* ctx, Rpc rpc,
    const google::protobuf::Message& request) {
  const auto index = static_cast<size_t>(rpc);
  return std::make_shared<ServiceCall>(gate_, *ctx, kRpcNames[index],
                                       rpc_metrics_[index], request, options_);
}

grpc::ServerUnaryReactor* PlannerService::RunCall(
    grpc::CallbackServerContext* ctx, Rpc rpc,
    const google::protobuf::Message& request,
    google::protobuf::Message* response,
    absl::FunctionRef<absl::Status()> body) {
  std::shared_ptr<ServiceCall> call = Begin(ctx, rpc, request);
  absl::Status status = call->refusal();
  if (status.ok()) status = body();
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(call->End(status, response));
  return reactor;
}

grpc::ServerUnaryReactor* PlannerService::RunPlanning(
    grpc::CallbackServerContext* ctx, Rpc rpc,
    const google::protobuf::Message& request,
    google::protobuf::Message* response,
    absl::FunctionRef<absl::StatusOr<PlanningCall>()> prepare) {
  std::shared_ptr<ServiceCall> call = Begin(ctx, rpc, request);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  absl::StatusOr<PlanningCall> planning =
      call->refusal().ok() ? prepare()
                           : absl::StatusOr<PlanningCall>(call->refusal());
  if (!planning.ok()) {
    reactor->Finish(call->End(planning.status(), response));
    return reactor;
  }
  auto finish = [reactor, call, response, plan = std::move(planning->plan)] {
    reactor->Finish(call->End(plan(), response));
  };
  if (!planning->heavy || pool_ == nullptr) {
    finish();
    return reactor;
  }
  PlanningPool::Refusal refusal{};
  absl::Status queued = pool_->Submit(planning->credential, finish, &refusal);
  if (!queued.ok()) {
    if (metrics_ != nullptr) metrics_->RecordPlanningRefused(refusal);
    reactor->Finish(call->End(queued, response));
  }
  return reactor;
}

template <typename Request>
grpc::ServerUnaryReactor* PlannerService::RunMeshCall(
    grpc::CallbackServerContext* ctx, Rpc rpc, const Request& request,
    google::protobuf::Message* response,
    absl::FunctionRef<absl::Status(const Mesh&)> body) {
  return RunCall(ctx, rpc, request, response, [&]() -> absl::Status {
    absl::StatusOr<std::shared_ptr<const Mesh>> mesh =
        RequestMesh(registry_, request);
    if (!mesh.ok()) return mesh.status();
    return body(**mesh);
  });
}

absl::StatusOr<PlanRequest> PlannerService::ParsePlan(
    const Mesh& mesh, const v1::PlanRequest& proto, uint64_t cache_scope) {
  absl::StatusOr<PlanRequest> request =
      LimitedPlanRequest(mesh, proto.tensor(), proto.src(), proto.dst(),
                         proto.options(), options_, cache_scope);
  if (!request.ok() && metrics_ != nullptr) {
    // Labelled by the planner asked for; an unknown planner has no series.
    absl::StatusOr<PlannerKind> planner =
        proto::PlannerFromProto(proto.options().planner());
    if (planner.ok()) {
      metrics_->RecordRefused(*planner, request.status().code());
    }
  }
  return request;
}

absl::StatusOr<reshard::Plan> PlannerService::PlanOne(
    const Mesh& mesh, const PlanRequest& request, const StopCheck& stop) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<reshard::Plan> plan =
      MakePlanCached(mesh, request, cache_, stop);
  if (metrics_ != nullptr) {
    metrics_->RecordPlanned(
        request.options.planner, plan,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return plan;
}

grpc::ServerUnaryReactor* PlannerService::RegisterMesh(
    grpc::CallbackServerContext* ctx, const v1::RegisterMeshRequest* request,
    v1::RegisterMeshResponse* response) {
  return RunCall(
      ctx, Rpc::kRegisterMesh, *request, response, [&]() -> absl::Status {
        absl::StatusOr<Mesh> mesh = proto::MeshFromProto(request->mesh());
        if (!mesh.ok()) return mesh.status();
        absl::StatusOr<std::string> owner = CredentialOf(*ctx, options_);
        if (!owner.ok()) return owner.status();
        absl::StatusOr<MeshRegistry::Registered> registered =
            registry_.Register(*std::move(mesh), *owner);
        if (!registered.ok()) return registered.status();
        response->set_mesh_id(registered->id);
        response->set_created(registered->created);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* PlannerService::GetMesh(
    grpc::CallbackServerContext* ctx, const v1::GetMeshRequest* request,
    v1::GetMeshResponse* response) {
  return RunCall(ctx, Rpc::kGetMesh, *request, response, [&]() -> absl::Status {
    std::shared_ptr<const Mesh> mesh = registry_.Get(request->mesh_id());
    if (mesh == nullptr) return UnknownMesh(request->mesh_id());
    response->set_mesh_id(request->mesh_id());
    *response->mutable_mesh() = proto::MeshToProto(*mesh);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* PlannerService::ListMeshes(
    grpc::CallbackServerContext* ctx, const v1::ListMeshesRequest* request,
    v1::ListMeshesResponse* response) {
  return RunCall(
      ctx, Rpc::kListMeshes, *request, response, [&]() -> absl::Status {
        absl::StatusOr<coordinator::Caller> caller =
            CallerOf(*ctx, options_.admin_token);
        if (!caller.ok()) return caller.status();
        if (caller->admin) {
          return FillMeshesPage(registry_, nullptr, *request,
                                options_.max_message_bytes, response);
        }
        absl::StatusOr<std::string> owner = CredentialOf(*ctx, options_);
        if (!owner.ok()) return owner.status();
        return FillMeshesPage(registry_, &*owner, *request,
                              options_.max_message_bytes, response);
      });
}

grpc::ServerUnaryReactor* PlannerService::DeleteMesh(
    grpc::CallbackServerContext* ctx, const v1::DeleteMeshRequest* request,
    v1::DeleteMeshResponse* response) {
  return RunCall(
      ctx, Rpc::kDeleteMesh, *request, response, [&]() -> absl::Status {
        // With an admin token configured only the admin deletes; without one,
        // only the credential that registered the mesh.
        absl::Status admin =
            CheckAdminToken(*ctx, options_.admin_token, "DeleteMesh");
        if (!admin.ok()) return admin;
        absl::StatusOr<std::string> owner = CredentialOf(*ctx, options_);
        if (!owner.ok()) return owner.status();
        switch (registry_.Delete(
            request->mesh_id(),
            options_.admin_token.empty() ? &*owner : nullptr)) {
          case MeshRegistry::Deleted::kYes:
            return absl::OkStatus();
          case MeshRegistry::Deleted::kUnknown:
            return UnknownMesh(request->mesh_id());
          case MeshRegistry::Deleted::kNotOwner:
            break;
        }
        return absl::PermissionDeniedError(absl::StrCat(
            "mesh_id: mesh ", request->mesh_id(),
            " was registered by another credential; only that credential (or "
            "the admin, with --admin_token_file) deletes it"));
      });
}

grpc::ServerUnaryReactor* PlannerService::Plan(grpc::CallbackServerContext* ctx,
                                               const v1::PlanRequest* request,
                                               v1::PlanResponse* response) {
  return RunPlanning(
      ctx, Rpc::kPlan, *request, response,
      [&]() -> absl::StatusOr<PlanningCall> {
        absl::StatusOr<ScopedMesh> scoped =
            ScopedMeshOf(registry_, options_, *ctx, *request);
        if (!scoped.ok()) return scoped.status();
        absl::StatusOr<PlanRequest> parsed =
            ParsePlan(*scoped->mesh, *request, scoped->scope);
        if (!parsed.ok()) return parsed.status();
        absl::StatusOr<std::optional<ProgramsAsked>> programs =
            ProgramsAskedOf(*scoped->mesh, *request);
        if (!programs.ok()) return programs.status();
        const bool heavy = NeedsPlanningPool(*scoped->mesh, *parsed, cache_);
        return PlanningCall{
            heavy, scoped->scope,
            [this, ctx, response, mesh = scoped->mesh,
             parsed = *std::move(parsed), programs = *programs] {
              absl::StatusOr<reshard::Plan> plan =
                  PlanOne(*mesh, parsed, CallStop(ctx));
              if (!plan.ok()) return plan.status();
              proto::PlanToProto(*mesh, *plan, response->mutable_plan());
              response->mutable_plan()->set_mesh_id(proto::MeshId(*mesh));
              if (!programs.has_value()) return absl::OkStatus();
              absl::StatusOr<std::string> json =
                  executor::ProgramsJson(*mesh, *plan, programs->position);
              if (!json.ok()) return json.status();
              response->set_programs_json(*std::move(json));
              return absl::OkStatus();
            }};
      });
}

grpc::ServerUnaryReactor* PlannerService::PlanBatch(
    grpc::CallbackServerContext* ctx, const v1::PlanBatchRequest* request,
    v1::PlanBatchResponse* response) {
  return RunPlanning(
      ctx, Rpc::kPlanBatch, *request, response,
      [&]() -> absl::StatusOr<PlanningCall> {
        absl::StatusOr<ScopedMesh> scoped =
            ScopedMeshOf(registry_, options_, *ctx, *request);
        if (!scoped.ok()) return scoped.status();
        return PlanningCall{
            BatchNeedsPool(*scoped->mesh, *request), scoped->scope,
            [this, ctx, request, response, mesh = scoped->mesh,
             scope = scoped->scope] {
              const auto start = std::chrono::steady_clock::now();
              absl::StatusOr<BatchPlan> batch = ServeBatch(
                  *mesh, *request, options_, cache_, CallStop(ctx), scope);
              if (!batch.ok()) return batch.status();
              RecordBatch(metrics_, request->options(), *batch,
                          std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
              proto::BatchPlanToProto(*mesh, *batch, proto::MeshId(*mesh),
                                      response);
              return absl::OkStatus();
            }};
      });
}

grpc::ServerUnaryReactor* PlannerService::ResolveGroups(
    grpc::CallbackServerContext* ctx, const v1::ResolveGroupsRequest* request,
    v1::ResolveGroupsResponse* response) {
  return RunMeshCall(
      ctx, Rpc::kResolveGroups, *request, response, [&](const Mesh& m) {
        const int64_t position = m.PositionOfRank(request->rank());
        if (position < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "rank: ", request->rank(), " is not a rank of the mesh"));
        }
        for (int d = 0; d < m.ndim(); ++d) {
          response->add_coordinates(m.Coordinate(position, d));
        }
        std::vector<Group> groups;
        for (int d = 0; d < m.ndim(); ++d) groups.push_back({d});
        for (const Group& g : m.flattened()) groups.push_back(g);
        // Refused before the ranks are listed: a group of a huge mesh
        // would take more memory than any reply may carry.
        int64_t ranks = 0;
        for (const Group& g : groups) ranks += m.GroupSize(g);
        if (ranks * kMaxRankBytes > options_.max_message_bytes) {
          return absl::ResourceExhaustedError(
              absl::StrCat("the reply would list ", ranks,
                           " ranks, over this server's --max_message_bytes ",
                           options_.max_message_bytes));
        }
        for (const Group& g : groups) {
          v1::ResolvedGroup* out = response->add_groups();
          out->set_name(m.DimsName(g));
          for (int d : g) out->add_mesh_dims(d);
          for (int64_t r : m.GroupRanks(position, g)) out->add_ranks(r);
          out->set_index(m.IndexInGroup(position, g));
        }
        return absl::OkStatus();
      });
}

}  // namespace reshard::server

namespace reshard::server {

grpc::ServerUnaryReactor* PlannerService::PlanCrossMesh(
    grpc::CallbackServerContext* ctx, const v1::PlanCrossMeshRequest* request,
    v1::PlanCrossMeshResponse* response) {
  return RunPlanning(
      ctx, Rpc::kPlanCrossMesh, *request, response,
      [&]() -> absl::StatusOr<PlanningCall> {
        absl::StatusOr<CrossMeshCall> call =
            CrossMeshCallOf(registry_, *request, options_);
        if (!call.ok()) return call.status();
        absl::StatusOr<std::string> credential = CredentialOf(*ctx, options_);
        if (!credential.ok()) return credential.status();
        call->request.cache_scope = CacheScopeOf(*credential);
        const std::optional<int64_t> program_rank =
            request->has_program_rank()
                ? std::optional<int64_t>(request->program_rank())
                : std::nullopt;
        // Two meshes' searches and every rank pair's boxes: always heavy.
        return PlanningCall{
            true, call->request.cache_scope,
            [this, ctx, response, program_rank, call = *std::move(call)] {
              absl::StatusOr<CrossMeshPlan> plan =
                  MakeCrossMeshPlan(*call.src_mesh, *call.dst_mesh,
                                    call.request, &cache_, CallStop(ctx));
              if (!plan.ok()) return plan.status();
              proto::CrossPlanToProto(*call.src_mesh, *call.dst_mesh, *plan,
                                      kMaxListedTransfers,
                                      response->mutable_plan());
              if (!program_rank) return absl::OkStatus();
              absl::StatusOr<executor::CrossProgram> program =
                  executor::CompileCrossProgram(*call.src_mesh, *call.dst_mesh,
                                                *plan, *program_rank);
              if (!program.ok()) {
                return absl::Status(
                    program.status().code(),
                    absl::StrCat("program_rank: ", program.status().message()));
              }
              response->set_program_json(executor::CrossProgramJson(*program));
              return absl::OkStatus();
            }};
      });
}

grpc::ServerUnaryReactor* PlannerService::PlanCrossMeshBatch(
    grpc::CallbackServerContext* ctx,
    const v1::PlanCrossMeshBatchRequest* request,
    v1::PlanCrossMeshBatchResponse* response) {
  return RunPlanning(
      ctx, Rpc::kPlanCrossMeshBatch, *request, response,
      [&]() -> absl::StatusOr<PlanningCall> {
        absl::StatusOr<CrossBatchCall> call =
            CrossBatchCallOf(registry_, *request, options_);
        if (!call.ok()) return call.status();
        absl::StatusOr<std::string> credential = CredentialOf(*ctx, options_);
        if (!credential.ok()) return credential.status();
        const uint64_t scope = CacheScopeOf(*credential);
        for (CrossBatchItem& item : call->items) {
          item.request.cache_scope = scope;
        }
        return PlanningCall{
            true, scope, [this, ctx, response, call = *std::move(call)] {
              absl::StatusOr<CrossBatchPlan> batch = MakeCrossMeshBatch(
                  *call.items.front().src_mesh, *call.dst_mesh, call.items,
                  call.bucket_bytes, &cache_, CallStop(ctx));
              if (!batch.ok()) return batch.status();
              std::vector<const Mesh*> sources;
              for (const CrossBatchItem& item : call.items) {
                sources.push_back(item.src_mesh.get());
              }
              proto::CrossBatchToProto(sources, *call.dst_mesh, *batch,
                                       kMaxListedTransfers, response);
              return absl::OkStatus();
            }};
      });
}

}  // namespace reshard::server
