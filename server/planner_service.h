// PlannerService implements reshard.v1.Planner on gRPC's callback API: a
// thin adapter that converts requests to core types (proto/convert.h), calls
// the registry, the plan cache and the planners, and converts back. Every
// failed request is logged as one line. Deadlines and cancellations stop
// searches (DEADLINE_EXCEEDED / CANCELLED).
#ifndef RESHARD_SERVER_PLANNER_SERVICE_H_
#define RESHARD_SERVER_PLANNER_SERVICE_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "planner/search/plan_cache.h"
#include "planner/search/search_support.h"
#include "reshard/v1/planner.grpc.pb.h"
#include "server/mesh_registry.h"
#include "server/planner_metrics.h"
#include "server/planning_pool.h"
#include "server/request_plan.h"
#include "server/service_call.h"

namespace reshard::server {

class PlannerService final : public v1::Planner::CallbackService {
 public:
  // Graceful shutdown: after StartDraining every new call is refused with
  // UNAVAILABLE (clients retry another replica); WaitIdle returns once the
  // calls already running have finished and no call has arrived for a
  // quiet period (so calls queued inside gRPC get their answer too), or
  // false at `deadline`.
  void StartDraining() { gate_.StartDraining(); }
  bool WaitIdle(std::chrono::steady_clock::time_point deadline) const {
    return gate_.WaitIdle(deadline);
  }
  bool draining() const { return gate_.draining(); }
  // Calls in their handlers now (refused ones included).
  int in_flight() const { return gate_.in_flight(); }

  // `metrics`, when not null, records every call and plan (it must outlive
  // the service); null records nothing and costs nothing.
  // Heavy searches run on `pool` (null: on gRPC's thread, for tools and
  // tests that need no bound).
  PlannerService(MeshRegistry& registry, PlanCache& cache,
                 ServiceOptions options, PlannerMetrics* metrics = nullptr,
                 PlanningPool* pool = nullptr);

  grpc::ServerUnaryReactor* RegisterMesh(
      grpc::CallbackServerContext* ctx, const v1::RegisterMeshRequest* request,
      v1::RegisterMeshResponse* response) override;
  grpc::ServerUnaryReactor* GetMesh(grpc::CallbackServerContext* ctx,
                                    const v1::GetMeshRequest* request,
                                    v1::GetMeshResponse* response) override;
  grpc::ServerUnaryReactor* ListMeshes(
      grpc::CallbackServerContext* ctx, const v1::ListMeshesRequest* request,
      v1::ListMeshesResponse* response) override;
  grpc::ServerUnaryReactor* DeleteMesh(
      grpc::CallbackServerContext* ctx, const v1::DeleteMeshRequest* request,
      v1::DeleteMeshResponse* response) override;
  grpc::ServerUnaryReactor* Plan(grpc::CallbackServerContext* ctx,
                                 const v1::PlanRequest* request,
                                 v1::PlanResponse* response) override;
  grpc::ServerUnaryReactor* PlanBatch(grpc::CallbackServerContext* ctx,
                                      const v1::PlanBatchRequest* request,
                                      v1::PlanBatchResponse* response) override;
  grpc::ServerUnaryReactor* ResolveGroups(
      grpc::CallbackServerContext* ctx, const v1::ResolveGroupsRequest* request,
      v1::ResolveGroupsResponse* response) override;
  grpc::ServerUnaryReactor* PlanCrossMesh(
      grpc::CallbackServerContext* ctx, const v1::PlanCrossMeshRequest* request,
      v1::PlanCrossMeshResponse* response) override;
  grpc::ServerUnaryReactor* PlanCrossMeshBatch(
      grpc::CallbackServerContext* ctx,
      const v1::PlanCrossMeshBatchRequest* request,
      v1::PlanCrossMeshBatchResponse* response) override;

 private:
  // The service's methods, named in logs and metrics by kRpcNames.
  enum class Rpc {
    kRegisterMesh,
    kGetMesh,
    kListMeshes,
    kDeleteMesh,
    kPlan,
    kPlanBatch,
    kResolveGroups,
    kPlanCrossMesh,
    kPlanCrossMeshBatch,
  };
  static constexpr std::array<const char*, 9> kRpcNames = {
      "RegisterMesh",  "GetMesh",       "ListMeshes",
      "DeleteMesh",    "Plan",          "PlanBatch",
      "ResolveGroups", "PlanCrossMesh", "PlanCrossMeshBatch"};

  // A Plan's or PlanBatch's planning, ready to run: whether it needs the
  // planning pool, whose it is there, and the work (it fills the reply).
  struct PlanningCall {
    bool heavy = false;
    uint64_t credential = 0;
    std::function<absl::Status()> plan;
  };

  // Begins a call (server/service_call.h), shared by the work that
  // finishes it on the planning pool.
  std::shared_ptr<ServiceCall> Begin(grpc::CallbackServerContext* ctx, Rpc rpc,
                                     const google::protobuf::Message& request);
  // Runs one call: counts it as running, refuses it with UNAVAILABLE while
  // draining and INVALID_ARGUMENT when `request` is past a field's bound,
  // else runs `body`, refusing a `response` over --max_message_bytes
  // (server/message_bounds.h); finishes the call with the resulting status
  // (logged when not OK).
  grpc::ServerUnaryReactor* RunCall(grpc::CallbackServerContext* ctx, Rpc rpc,
                                    const google::protobuf::Message& request,
                                    google::protobuf::Message* response,
                                    absl::FunctionRef<absl::Status()> body);
  // Plan and PlanBatch: admitted as RunCall admits, `prepare` says what to
  // plan; a heavy planning runs on the pool (its refusal when the queue is
  // full) and finishes the call from there; a light one runs here.
  grpc::ServerUnaryReactor* RunPlanning(
      grpc::CallbackServerContext* ctx, Rpc rpc,
      const google::protobuf::Message& request,
      google::protobuf::Message* response,
      absl::FunctionRef<absl::StatusOr<PlanningCall>()> prepare);
  // The same for calls on a mesh the request names or carries: NOT_FOUND /
  // INVALID_ARGUMENT when there is none, else `body` runs on it.
  template <typename Request>
  grpc::ServerUnaryReactor* RunMeshCall(
      grpc::CallbackServerContext* ctx, Rpc rpc, const Request& request,
      google::protobuf::Message* response,
      absl::FunctionRef<absl::Status(const Mesh&)> body);
  // A Plan call's request within this server's limits, its refusal
  // recorded; then planned through the cache, and recorded.
  absl::StatusOr<PlanRequest> ParsePlan(const Mesh& mesh,
                                        const v1::PlanRequest& proto,
                                        uint64_t cache_scope);
  absl::StatusOr<reshard::Plan> PlanOne(const Mesh& mesh,
                                        const PlanRequest& request,
                                        const StopCheck& stop);

  MeshRegistry& registry_;
  PlanCache& cache_;
  const ServiceOptions options_;
  PlannerMetrics* const metrics_;
  PlanningPool* const pool_;
  // Each method's series (all null when metrics are off).
  std::array<RpcMethodMetrics*, kRpcNames.size()> rpc_metrics_{};
  CallGate gate_;
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_PLANNER_SERVICE_H_
