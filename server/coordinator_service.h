// CoordinatorService implements reshard.v1.Coordinator: a thin adapter from
// the wire to the Coordinator's core (coordinator/coordinator.h). The calls
// that wait for others are on the callback API and hold no thread while
// they wait: Dispatch, which lives as long as its agent, and StoreGet,
// which waits for its keys (capped by --max_store_waiters and
// --max_store_waiters_per_credential). The other unary calls use gRPC's
// synchronous API: RunJob holds its thread while it runs, bounded by
// --max_concurrent_runs, and the rest return at once. RunJob plans with
// the Planner's registry and cache when it is given a plan request.
#ifndef RESHARD_SERVER_COORDINATOR_SERVICE_H_
#define RESHARD_SERVER_COORDINATOR_SERVICE_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <utility>

#include "absl/functional/function_ref.h"
#include "coordinator/coordinator.h"
#include "planner/search/plan_cache.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "run_values/cross_work.h"
#include "server/coordinator_metrics.h"
#include "server/mesh_registry.h"
#include "server/request_plan.h"
#include "server/service_call.h"

namespace reshard::server {

class CoordinatorService final
    : public v1::Coordinator::WithCallbackMethod_Dispatch<
          v1::Coordinator::WithCallbackMethod_StoreGet<
              v1::Coordinator::Service>> {
 public:
  // `metrics` may be null (no metrics endpoint).
  // RunJob's heavy plans run on `pool` (null: on the call's thread).
  CoordinatorService(coordinator::Coordinator& core, MeshRegistry& registry,
                     PlanCache& cache, ServiceOptions options,
                     CoordinatorMetrics* metrics, PlanningPool* pool = nullptr)
      : core_(core),
        registry_(registry),
        cache_(cache),
        options_(options),
        metrics_(metrics),
        pool_(pool) {}

  // Refuses new calls and closes every dispatch stream (agents see
  // UNAVAILABLE); runs in flight fail naming the ranks that left.
  void StartDraining();

  grpc::Status Join(grpc::ServerContext* ctx, const v1::JoinRequest* request,
                    v1::JoinResponse* response) override;
  // On the callback API: an idle stream holds no thread
  // (server/dispatch_stream.h).
  grpc::ServerWriteReactor<v1::Work>* Dispatch(
      grpc::CallbackServerContext* ctx,
      const v1::DispatchRequest* request) override;
  grpc::Status Report(grpc::ServerContext* ctx,
                      const v1::ReportRequest* request,
                      v1::ReportResponse* response) override;
  grpc::Status Progress(grpc::ServerContext* ctx,
                        const v1::ProgressRequest* request,
                        v1::ProgressResponse* response) override;
  grpc::Status Committed(grpc::ServerContext* ctx,
                         const v1::CommittedRequest* request,
                         v1::CommittedResponse* response) override;
  grpc::Status Leave(grpc::ServerContext* ctx, const v1::LeaveRequest* request,
                     v1::LeaveResponse* response) override;
  grpc::Status StoreSet(grpc::ServerContext* ctx,
                        const v1::StoreSetRequest* request,
                        v1::StoreSetResponse* response) override;
  // On the callback API: a waiting StoreGet holds no thread
  // (server/store_get_call.h).
  grpc::ServerUnaryReactor* StoreGet(grpc::CallbackServerContext* ctx,
                                     const v1::StoreGetRequest* request,
                                     v1::StoreGetResponse* response) override;
  grpc::Status StoreDelete(grpc::ServerContext* ctx,
                           const v1::StoreDeleteRequest* request,
                           v1::StoreDeleteResponse* response) override;
  grpc::Status RunJob(grpc::ServerContext* ctx,
                      const v1::RunJobRequest* request,
                      v1::RunJobResponse* response) override;
  grpc::Status ListJobs(grpc::ServerContext* ctx,
                        const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;
  grpc::Status GetJob(grpc::ServerContext* ctx,
                      const v1::GetJobRequest* request,
                      v1::GetJobResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext* ctx,
                         const v1::CancelJobRequest* request,
                         v1::CancelJobResponse* response) override;
  grpc::Status PrepareCrossMesh(
      grpc::ServerContext* ctx, const v1::PrepareCrossMeshRequest* request,
      v1::PrepareCrossMeshResponse* response) override;
  grpc::Status DeleteSchedule(grpc::ServerContext* ctx,
                              const v1::DeleteScheduleRequest* request,
                              v1::DeleteScheduleResponse* response) override;

 private:
  // The run RunJob asks for: planned here, or given.
  absl::StatusOr<std::shared_ptr<const coordinator::RunSpec>> SpecOf(
      grpc::ServerContext* ctx, const v1::RunJobRequest& request);
  // Plans one cross-mesh request here with the Planner's cache (its
  // errors prefixed by `field`).
  absl::StatusOr<executor::CrossWork> PlanCross(
      grpc::ServerContext* ctx, const v1::PlanCrossMeshRequest& request,
      const std::string& field);
  // A cross-mesh batch planned here, tensor by tensor (PlanCross; errors
  // under `cross_batch_request.`).
  absl::StatusOr<coordinator::RunSpec> PlannedCrossBatchSpecOf(
      grpc::ServerContext* ctx, const v1::CrossBatchRequest& request);
  // A cross-mesh run (RunJobRequest.cross, PrepareCrossMeshRequest.cross;
  // its errors under `cross.`), planned here: its spec, `mesh` one dim
  // over the union of the rank maps.
  absl::StatusOr<coordinator::RunSpec> CrossSpecOf(
      grpc::ServerContext* ctx, const v1::PlanCrossMeshRequest& request);
  // The run of the job's schedule RunJobRequest.schedule_id names.
  absl::StatusOr<coordinator::RunSpec> ScheduledSpecOf(
      grpc::ServerContext* ctx, const v1::RunJobRequest& request);
  // Its mesh and plan: planned here (with the Planner's cache), or given.
  absl::StatusOr<std::pair<Mesh, Plan>> PlanOf(
      grpc::ServerContext* ctx, const v1::RunJobRequest& request);

  // RunJob's work: the run, and the response filled when it ran.
  absl::StatusOr<coordinator::RunOutcome> Run(grpc::ServerContext* ctx,
                                              const v1::RunJobRequest& request,
                                              v1::RunJobResponse* response);
  // The call's credentials (server/caller_credentials.h).
  absl::StatusOr<coordinator::Caller> CredentialsOf(
      const grpc::ServerContextBase& ctx) const;
  // Dispatch's start: the agent's mailbox, or why it gets none.
  absl::StatusOr<std::shared_ptr<coordinator::Mailbox>> OpenMailbox(
      const grpc::ServerContextBase& ctx, const coordinator::AgentId& id);
  // Records a dispatch stream's end (its code and how long it lived).
  void RecordDispatch(const grpc::Status& status,
                      std::chrono::steady_clock::time_point start);
  // Runs one call through a ServiceCall (server/service_call.h): `body`
  // unless the call is refused first; its end recorded and logged.
  grpc::Status Serve(grpc::ServerContextBase* ctx, const char* method,
                     const google::protobuf::Message& request,
                     google::protobuf::Message* response,
                     ServiceCall::Drain drain,
                     absl::FunctionRef<absl::Status()> body);
  // The method's series; null without metrics.
  RpcMethodMetrics* MethodMetrics(const char* method) const;

  coordinator::Coordinator& core_;
  MeshRegistry& registry_;
  PlanCache& cache_;
  const ServiceOptions options_;
  CoordinatorMetrics* const metrics_;
  PlanningPool* const pool_;
  CallGate gate_;
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_COORDINATOR_SERVICE_H_
