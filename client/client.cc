#include "reshard/client.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/credential_headers.h"
#include "common/job_replica.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "proto/batch_convert.h"
#include "proto/convert.h"
#include "proto/coordinator_convert.h"
#include "proto/cross_convert.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "reshard/v1/planner.grpc.pb.h"
#include "transport/tls_credentials.h"

namespace reshard {
namespace {

// A gRPC target for one address or a round-robin list of several.
std::string ChannelTarget(const std::string& target) {
  if (target.find(',') == std::string::npos) return target;
  return absl::StrCat("ipv4:", target);
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           const TlsConfig& tls) {
  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName("round_robin");
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(ChannelTarget(target),
                                   ChannelCredentialsFor(tls), args);
}

// A paged listing whole: `page(token, &next)` fetches one page and says
// where the next starts (empty: it was the last). A server that gives a
// token twice would loop, so that ends the listing with an error.
absl::Status EveryPage(
    absl::FunctionRef<absl::Status(const std::string&, std::string*)> page) {
  std::string token;
  absl::flat_hash_set<std::string> seen;
  while (true) {
    std::string next;
    absl::Status s = page(token, &next);
    if (!s.ok() || next.empty()) return s;
    if (!seen.insert(next).second) {
      return absl::InternalError(
          absl::StrCat("the server gave page token \"", next, "\" twice"));
    }
    token = std::move(next);
  }
}

}  // namespace

// What the public header keeps out of sight: the channel, the stubs and
// the meshes this client registered.
struct Client::Impl {
  Impl(ClientOptions options, std::shared_ptr<grpc::Channel> channel);

  // Adds the configured credentials (admin and job tokens) to a call.
  void Authorize(grpc::ClientContext& context) const;
  // Runs `call(context)` with a deadline, retrying UNAVAILABLE.
  template <typename Call>
  absl::Status WithRetries(Call call);
  std::shared_ptr<const Mesh> KnownMesh(const std::string& id);
  void RememberMesh(const std::string& id, std::shared_ptr<const Mesh> mesh);
  void ForgetMesh(const std::string& id);
  // The Coordinator of the replica serving `job`.
  v1::Coordinator::Stub& CoordinatorFor(const std::string& job);
  // `batch`: the batch the request gives (what its response ran).
  absl::StatusOr<JobRun> CallRunJob(const v1::RunJobRequest& request,
                                    const Mesh& mesh,
                                    const JobRunOptions& options,
                                    const executor::BatchWork* batch = nullptr);
  // The PrepareCrossMesh RPC (never retried).
  absl::StatusOr<v1::PrepareCrossMeshResponse> CallPrepare(
      const v1::PrepareCrossMeshRequest& request);
  // The RunJob RPC itself: never retried, bounded by options.deadline.
  absl::Status SendRunJob(const v1::RunJobRequest& request,
                          const JobRunOptions& options,
                          v1::RunJobResponse* response);

  const ClientOptions options;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Planner::Stub> stub;
  // Job calls: one Coordinator stub per listed replica (on `channel` when
  // there is only one), in the order of the target list.
  std::vector<std::string> replicas;
  std::vector<std::unique_ptr<v1::Coordinator::Stub>> coordinators;
  absl::Mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<const Mesh>> meshes
      ABSL_GUARDED_BY(mu);
};

absl::StatusOr<std::unique_ptr<Client>> Client::Create(ClientOptions options) {
  if (options.target.empty()) {
    return absl::InvalidArgumentError("target: must name a server host:port");
  }
  if (options.timeout <= absl::ZeroDuration() ||
      options.deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout, deadline: must be > 0");
  }
  if (options.max_attempts < 1) {
    return absl::InvalidArgumentError("max_attempts: must be >= 1");
  }
  if (SplitReplicaList(options.target).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: \"", options.target, "\" names no server"));
  }
  auto channel = MakeChannel(options.target, options.tls);
  return std::unique_ptr<Client>(new Client(
      std::make_unique<Impl>(std::move(options), std::move(channel))));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

Client::Impl::Impl(ClientOptions options_in,
                   std::shared_ptr<grpc::Channel> channel_in)
    : options(std::move(options_in)),
      channel(std::move(channel_in)),
      stub(v1::Planner::NewStub(channel)),
      replicas(SplitReplicaList(options.target)) {
  if (replicas.size() == 1) {
    coordinators.push_back(v1::Coordinator::NewStub(channel));
    return;
  }
  // Channels connect lazily: one per replica costs nothing until used.
  for (const std::string& replica : replicas) {
    coordinators.push_back(
        v1::Coordinator::NewStub(MakeChannel(replica, options.tls)));
  }
}

void Client::Impl::Authorize(grpc::ClientContext& context) const {
  if (!options.admin_token.empty()) {
    context.AddMetadata(kAdminTokenHeader, options.admin_token);
  }
  if (!options.job_token.empty()) {
    context.AddMetadata(kJobTokenHeader, options.job_token);
  }
}

template <typename Call>
absl::Status Client::Impl::WithRetries(Call call) {
  absl::Duration backoff = options.initial_backoff;
  const absl::Time call_deadline = absl::Now() + options.deadline;
  absl::Status status;
  for (int attempt = 1; attempt <= options.max_attempts; ++attempt) {
    grpc::ClientContext context;
    Authorize(context);
    context.set_deadline(absl::ToChronoTime(
        std::min(absl::Now() + options.timeout, call_deadline)));
    status = proto::StatusFromGrpc(call(context));
    if (status.code() != absl::StatusCode::kUnavailable) return status;
    if (attempt < options.max_attempts) {
      if (absl::Now() + backoff >= call_deadline) break;
      absl::SleepFor(backoff);
      backoff = std::min(backoff * 2, options.max_backoff);
    }
  }
  return status;
}

std::shared_ptr<const Mesh> Client::Impl::KnownMesh(const std::string& id) {
  absl::MutexLock lock(&mu);
  auto it = meshes.find(id);
  return it == meshes.end() ? nullptr : it->second;
}

void Client::Impl::RememberMesh(const std::string& id,
                                std::shared_ptr<const Mesh> mesh) {
  absl::MutexLock lock(&mu);
  meshes[id] = std::move(mesh);
}

void Client::Impl::ForgetMesh(const std::string& id) {
  absl::MutexLock lock(&mu);
  meshes.erase(id);
}

absl::StatusOr<std::string> Client::RegisterMesh(const Mesh& mesh) {
  v1::RegisterMeshRequest request;
  *request.mutable_mesh() = proto::MeshToProto(mesh);
  v1::RegisterMeshResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->RegisterMesh(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  impl_->RememberMesh(response.mesh_id(), std::make_shared<const Mesh>(mesh));
  return response.mesh_id();
}

absl::StatusOr<Mesh> Client::GetMesh(const std::string& mesh_id) {
  v1::GetMeshRequest request;
  request.set_mesh_id(mesh_id);
  v1::GetMeshResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->GetMesh(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  return proto::MeshFromProto(response.mesh());
}

absl::StatusOr<std::vector<std::pair<std::string, Mesh>>> Client::ListMeshes() {
  std::vector<std::pair<std::string, Mesh>> out;
  absl::Status s = EveryPage([&](const std::string& token, std::string* next) {
    v1::ListMeshesRequest request;
    request.set_page_token(token);
    v1::ListMeshesResponse response;
    absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
      return impl_->stub->ListMeshes(&ctx, request, &response);
    });
    if (!s.ok()) return s;
    for (const v1::GetMeshResponse& entry : response.meshes()) {
      absl::StatusOr<Mesh> mesh = proto::MeshFromProto(entry.mesh());
      if (!mesh.ok()) return mesh.status();
      out.emplace_back(entry.mesh_id(), *std::move(mesh));
    }
    *next = response.next_page_token();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::Status Client::DeleteMesh(const std::string& mesh_id) {
  v1::DeleteMeshRequest request;
  request.set_mesh_id(mesh_id);
  v1::DeleteMeshResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->DeleteMesh(&ctx, request, &response);
  });
  if (s.ok()) impl_->ForgetMesh(mesh_id);
  return s;
}

namespace {

void FillRequest(const PlanRequest& core, v1::PlanRequest& request) {
  *request.mutable_tensor() = proto::TensorToProto(core.tensor);
  *request.mutable_src() = proto::StateToProto(core.src);
  *request.mutable_dst() = proto::StateToProto(core.dst);
  *request.mutable_options() = proto::OptionsToProto(core.options);
}

}  // namespace

absl::StatusOr<Plan> Client::PlanRegistered(const std::string& mesh_id,
                                            const PlanRequest& core) {
  v1::PlanRequest request;
  request.set_mesh_id(mesh_id);
  FillRequest(core, request);
  v1::PlanResponse response;
  auto call = [&](grpc::ClientContext& ctx) {
    return impl_->stub->Plan(&ctx, request, &response);
  };
  absl::Status s = impl_->WithRetries(call);
  std::shared_ptr<const Mesh> mesh = impl_->KnownMesh(mesh_id);
  // A replica that has not seen the mesh (or restarted) answers NOT_FOUND:
  // register it (round-robin reaches the replicas in turn) and retry; as a
  // last resort send the mesh inline, which any replica can plan on.
  for (int attempt = 0;
       s.code() == absl::StatusCode::kNotFound && mesh != nullptr &&
       attempt < impl_->options.max_attempts;
       ++attempt) {
    absl::StatusOr<std::string> id = RegisterMesh(*mesh);
    if (!id.ok()) return id.status();
    s = impl_->WithRetries(call);
  }
  if (s.code() == absl::StatusCode::kNotFound && mesh != nullptr) {
    return PlanInline(*mesh, core);
  }
  if (!s.ok()) return s;
  if (mesh == nullptr) {
    absl::StatusOr<Mesh> fetched = GetMesh(mesh_id);
    if (!fetched.ok()) return fetched.status();
    mesh = std::make_shared<const Mesh>(*std::move(fetched));
    impl_->RememberMesh(mesh_id, mesh);
  }
  return proto::PlanFromProto(*mesh, response.plan());
}

absl::StatusOr<Plan> Client::PlanInline(const Mesh& mesh,
                                        const PlanRequest& core) {
  v1::PlanRequest request;
  *request.mutable_mesh() = proto::MeshToProto(mesh);
  FillRequest(core, request);
  v1::PlanResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->Plan(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  return proto::PlanFromProto(mesh, response.plan());
}

absl::StatusOr<CrossMeshPlan> Client::PlanCrossMesh(
    const Mesh& src_mesh, const Mesh& dst_mesh,
    const CrossMeshRequest& request) {
  const v1::PlanCrossMeshRequest proto =
      proto::CrossRequestToProto(src_mesh, dst_mesh, request);
  v1::PlanCrossMeshResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->PlanCrossMesh(&ctx, proto, &response);
  });
  if (!s.ok()) return s;
  absl::StatusOr<proto::CrossPlanWithMeshes> plan =
      proto::CrossPlanFromProto(response.plan());
  if (!plan.ok()) return plan.status();
  return std::move(plan->plan);
}

absl::StatusOr<CrossBatchPlan> Client::PlanCrossMeshBatch(
    const std::vector<CrossBatchRequestTensor>& tensors, int64_t bucket_bytes) {
  v1::PlanCrossMeshBatchRequest request;
  for (const CrossBatchRequestTensor& t : tensors) {
    *request.add_tensors() =
        proto::CrossRequestToProto(t.src_mesh, t.dst_mesh, t.request);
    request.add_names(t.name);
  }
  request.set_bucket_bytes(bucket_bytes);
  v1::PlanCrossMeshBatchResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->PlanCrossMeshBatch(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  return proto::CrossBatchFromProto(response);
}

namespace {

v1::PlanBatchRequest BatchRequest(const Mesh& mesh,
                                  const std::vector<PlanRequest>& requests,
                                  const BatchOptions& options) {
  v1::PlanBatchRequest request;
  *request.mutable_mesh() = proto::MeshToProto(mesh);
  if (!requests.empty())
    *request.mutable_options() = proto::OptionsToProto(requests[0].options);
  for (const PlanRequest& core : requests) {
    v1::PlanBatchRequest::Item* item = request.add_items();
    *item->mutable_tensor() = proto::TensorToProto(core.tensor);
    *item->mutable_src() = proto::StateToProto(core.src);
    *item->mutable_dst() = proto::StateToProto(core.dst);
  }
  proto::BatchOptionsToProto(options, &request);
  return request;
}

}  // namespace

absl::StatusOr<std::vector<Plan>> Client::PlanBatch(
    const Mesh& mesh, const std::vector<PlanRequest>& requests) {
  absl::StatusOr<BatchPlan> batch = PlanBatchBucketed(
      mesh, requests,
      {.bucket_bytes = kDefaultBucketBytes, .all_or_nothing = true});
  if (!batch.ok()) return batch.status();
  std::vector<Plan> plans;
  for (absl::StatusOr<Plan>& plan : batch->plans) {
    if (!plan.ok()) return plan.status();
    plans.push_back(*std::move(plan));
  }
  return plans;
}

absl::StatusOr<BatchPlan> Client::PlanBatchBucketed(
    const Mesh& mesh, const std::vector<PlanRequest>& requests,
    const BatchOptions& options) {
  const v1::PlanBatchRequest request = BatchRequest(mesh, requests, options);
  v1::PlanBatchResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->PlanBatch(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  return proto::BatchPlanFromProto(mesh, response,
                                   static_cast<int>(requests.size()));
}

absl::StatusOr<std::vector<ResolvedGroup>> Client::ResolveGroups(
    const std::string& mesh_id, int64_t rank) {
  v1::ResolveGroupsRequest request;
  request.set_mesh_id(mesh_id);
  request.set_rank(rank);
  v1::ResolveGroupsResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->stub->ResolveGroups(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  std::vector<ResolvedGroup> groups;
  for (const v1::ResolvedGroup& g : response.groups()) {
    groups.push_back({g.name(),
                      Group(g.mesh_dims().begin(), g.mesh_dims().end()),
                      {g.ranks().begin(), g.ranks().end()},
                      g.index()});
  }
  return groups;
}

absl::Status Client::Health() {
  auto stub = grpc::health::v1::Health::NewStub(impl_->channel);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return stub->Check(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::UnavailableError(absl::StrCat(
        "server is ", grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
                          response.status())));
  }
  return absl::OkStatus();
}

// ---- Coordinator calls: routed to the job's replica ----

namespace {

JobInfo JobInfoFromProto(const v1::JobInfo& proto) {
  JobInfo job;
  job.name = proto.name();
  job.world_size = proto.world_size();
  job.backend =
      std::string(BackendName(proto::BackendFromProto(proto.backend())));
  job.generation = proto.generation();
  job.state = proto.state();
  for (const v1::AgentInfo& a : proto.agents()) {
    job.agents.push_back({a.rank(), a.version(), a.host(), a.connected()});
  }
  job.agents_joined = proto.agents_joined();
  job.agents_connected = proto.agents_connected();
  if (job.agents_joined == 0) {  // a server that predates the counts
    job.agents_joined = static_cast<int64_t>(job.agents.size());
    for (const JobAgentInfo& a : job.agents)
      job.agents_connected += a.connected;
  }
  job.current_run = proto.current_run();
  job.current_run_executions_done =
      proto.current_run_progress().executions_done();
  job.current_run_executions_total =
      proto.current_run_progress().executions_total();
  job.current_run_seconds = proto.current_run_progress().seconds();
  job.runs_total = proto.runs_total();
  job.runs_failed = proto.runs_failed();
  job.store_keys = proto.store_keys();
  job.store_bytes = proto.store_bytes();
  job.run_calls = proto.run_calls();
  for (const v1::JobRun& r : proto.recent_runs()) {
    job.recent_runs.push_back({r.run_id(), r.result(), r.error(), r.seconds()});
  }
  for (const v1::PreparedSchedule& s : proto.schedules()) {
    job.schedules.push_back({s.id(), s.tensors(), s.delivered()});
  }
  return job;
}

v1::RunJobRequest RunJobRequestOf(const std::string& job,
                                  const JobRunOptions& options) {
  v1::RunJobRequest request;
  request.set_job(job);
  request.set_iters(options.iters);
  request.set_warmup(options.warmup);
  request.set_timeout_seconds(options.timeout_seconds);
  request.set_agent_wait_seconds(options.agent_wait_seconds);
  for (const JobRunOptions::Tensors& t : options.tensors) {
    v1::TensorBinding* binding = request.add_tensors();
    binding->set_source(t.source);
    binding->set_into(t.into);
    binding->set_allocate(options.allocate);
  }
  if (!options.tensors.empty()) {
    request.set_iters(1);
    request.set_warmup(0);
  }
  request.set_no_staging(options.no_staging);
  return request;
}

}  // namespace

v1::Coordinator::Stub& Client::Impl::CoordinatorFor(const std::string& job) {
  return *coordinators[ReplicaIndexForJob(job, replicas)];
}

absl::StatusOr<JobRun> Client::RunJob(const std::string& job, const Mesh& mesh,
                                      const PlanRequest& core,
                                      const JobRunOptions& options) {
  v1::RunJobRequest request = RunJobRequestOf(job, options);
  v1::PlanRequest* plan_request = request.mutable_request();
  *plan_request->mutable_mesh() = proto::MeshToProto(mesh);
  FillRequest(core, *plan_request);
  return impl_->CallRunJob(request, mesh, options);
}

absl::StatusOr<JobRun> Client::RunJob(const std::string& job, const Mesh& mesh,
                                      const Plan& plan,
                                      const JobRunOptions& options) {
  v1::RunJobRequest request = RunJobRequestOf(job, options);
  *request.mutable_plan()->mutable_mesh() = proto::MeshToProto(mesh);
  proto::PlanToProto(mesh, plan, request.mutable_plan()->mutable_plan());
  return impl_->CallRunJob(request, mesh, options);
}

absl::StatusOr<JobRun> Client::RunJob(const std::string& job, const Mesh& mesh,
                                      const executor::BatchWork& work,
                                      const JobRunOptions& options) {
  v1::RunJobRequest request = RunJobRequestOf(job, options);
  v1::GivenBatch* given = request.mutable_batch();
  *given->mutable_mesh() = proto::MeshToProto(mesh);
  proto::BatchWorkToProto(mesh, work, given->mutable_work());
  for (const std::string& name : work.names) given->add_names(name);
  return impl_->CallRunJob(request, mesh, options, &work);
}

absl::StatusOr<JobRun> Client::RunCrossJob(const std::string& job,
                                           const Mesh& src_mesh,
                                           const Mesh& dst_mesh,
                                           const CrossMeshRequest& core,
                                           const JobRunOptions& options) {
  v1::RunJobRequest request = RunJobRequestOf(job, options);
  *request.mutable_cross() =
      proto::CrossRequestToProto(src_mesh, dst_mesh, core);
  return impl_->CallRunJob(request, src_mesh, options);
}

namespace {

// Fills a batch message (GivenCrossBatch or CrossBatchRequest): each
// tensor's entry by `add`, its name, then the exchange bound.
template <typename Tensor, typename Message, typename Add>
absl::Status FillCrossBatch(const std::vector<Tensor>& tensors,
                            int64_t exchange_bytes, Message* out, Add add) {
  if (tensors.empty()) {
    return absl::InvalidArgumentError("cross_batch: no tensors to move");
  }
  for (const Tensor& t : tensors) {
    add(t, *out);
    out->add_names(t.name);
  }
  out->set_exchange_bytes(exchange_bytes);
  return absl::OkStatus();
}

// The batch with the caller's plans, as RunJob and PrepareCrossMesh carry
// it. No transfers listed: every agent expands its own by the sender rule.
absl::Status GiveCrossBatch(
    const std::vector<Client::CrossBatchTensor>& tensors,
    int64_t exchange_bytes, v1::GivenCrossBatch* given) {
  return FillCrossBatch(
      tensors, exchange_bytes, given,
      [](const Client::CrossBatchTensor& t, v1::GivenCrossBatch& out) {
        proto::CrossPlanToProto(t.src_mesh, t.dst_mesh, t.plan, 0,
                                out.add_plans());
      });
}

// The batch as the job's replica plans it.
absl::Status AskCrossBatch(
    const std::vector<Client::CrossBatchRequestTensor>& tensors,
    int64_t exchange_bytes, v1::CrossBatchRequest* out) {
  return FillCrossBatch(
      tensors, exchange_bytes, out,
      [](const Client::CrossBatchRequestTensor& t, v1::CrossBatchRequest& m) {
        *m.add_tensors() =
            proto::CrossRequestToProto(t.src_mesh, t.dst_mesh, t.request);
      });
}

// A batch's schedule as PrepareCrossMesh answered it (its first tensor's
// meshes, no plan).
CrossSchedule BatchScheduleOf(const v1::PrepareCrossMeshResponse& response,
                              const Mesh& src_mesh, const Mesh& dst_mesh) {
  CrossSchedule schedule{response.schedule_id(),
                         response.generation(),
                         response.schedules(),
                         src_mesh,
                         dst_mesh,
                         {}};
  schedule.batch_tensors = response.cross_batch().tensors();
  return schedule;
}

}  // namespace

absl::StatusOr<JobRun> Client::RunCrossBatchJob(
    const std::string& job, const std::vector<CrossBatchRequestTensor>& tensors,
    int64_t exchange_bytes, const JobRunOptions& options) {
  v1::RunJobRequest request = RunJobRequestOf(job, options);
  absl::Status s = AskCrossBatch(tensors, exchange_bytes,
                                 request.mutable_cross_batch_request());
  if (!s.ok()) return s;
  return impl_->CallRunJob(request, tensors.front().dst_mesh, options);
}

absl::StatusOr<JobRun> Client::RunCrossBatchJob(
    const std::string& job, const std::vector<CrossBatchTensor>& tensors,
    int64_t exchange_bytes, const JobRunOptions& options) {
  v1::RunJobRequest request = RunJobRequestOf(job, options);
  absl::Status s =
      GiveCrossBatch(tensors, exchange_bytes, request.mutable_cross_batch());
  if (!s.ok()) return s;
  return impl_->CallRunJob(request, tensors.front().dst_mesh, options);
}

absl::StatusOr<JobRun> Client::RunSchedule(const std::string& job,
                                           const std::string& schedule_id,
                                           const JobRunOptions& options) {
  v1::RunJobRequest request = RunJobRequestOf(job, options);
  request.set_schedule_id(schedule_id);
  // The response names the run's mesh (one dim over the job's ranks).
  return impl_->CallRunJob(request, *Mesh::Create({{1}, {"ranks"}, {}}),
                           options);
}

absl::StatusOr<CrossSchedule> Client::PrepareCrossMesh(
    const std::string& job, const Mesh& src_mesh, const Mesh& dst_mesh,
    const CrossMeshRequest& core) {
  v1::PrepareCrossMeshRequest request;
  request.set_job(job);
  *request.mutable_cross() =
      proto::CrossRequestToProto(src_mesh, dst_mesh, core);
  absl::StatusOr<v1::PrepareCrossMeshResponse> response =
      impl_->CallPrepare(request);
  if (!response.ok()) return response.status();
  absl::StatusOr<proto::CrossPlanWithMeshes> plan =
      proto::CrossPlanFromProto(response->plan());
  if (!plan.ok()) return plan.status();
  return CrossSchedule{response->schedule_id(),   response->generation(),
                       response->schedules(),     std::move(plan->src_mesh),
                       std::move(plan->dst_mesh), std::move(plan->plan)};
}

absl::StatusOr<CrossSchedule> Client::PrepareCrossBatch(
    const std::string& job, const std::vector<CrossBatchTensor>& tensors,
    int64_t exchange_bytes) {
  v1::PrepareCrossMeshRequest request;
  request.set_job(job);
  absl::Status s =
      GiveCrossBatch(tensors, exchange_bytes, request.mutable_cross_batch());
  if (!s.ok()) return s;
  absl::StatusOr<v1::PrepareCrossMeshResponse> response =
      impl_->CallPrepare(request);
  if (!response.ok()) return response.status();
  return BatchScheduleOf(*response, tensors.front().src_mesh,
                         tensors.front().dst_mesh);
}

absl::StatusOr<CrossSchedule> Client::PrepareCrossBatch(
    const std::string& job, const std::vector<CrossBatchRequestTensor>& tensors,
    int64_t exchange_bytes) {
  v1::PrepareCrossMeshRequest request;
  request.set_job(job);
  absl::Status s = AskCrossBatch(tensors, exchange_bytes,
                                 request.mutable_cross_batch_request());
  if (!s.ok()) return s;
  absl::StatusOr<v1::PrepareCrossMeshResponse> response =
      impl_->CallPrepare(request);
  if (!response.ok()) return response.status();
  return BatchScheduleOf(*response, tensors.front().src_mesh,
                         tensors.front().dst_mesh);
}

absl::StatusOr<v1::PrepareCrossMeshResponse> Client::Impl::CallPrepare(
    const v1::PrepareCrossMeshRequest& request) {
  v1::PrepareCrossMeshResponse response;
  grpc::ClientContext context;
  Authorize(context);
  context.set_deadline(absl::ToChronoTime(absl::Now() + options.deadline));
  absl::Status s = proto::StatusFromGrpc(
      CoordinatorFor(request.job())
          .PrepareCrossMesh(&context, request, &response));
  if (!s.ok()) return s;
  return response;
}

absl::Status Client::DeleteSchedule(const std::string& job,
                                    const std::string& schedule_id) {
  v1::DeleteScheduleRequest request;
  request.set_job(job);
  request.set_schedule_id(schedule_id);
  v1::DeleteScheduleResponse response;
  return impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->CoordinatorFor(job).DeleteSchedule(&ctx, request, &response);
  });
}

absl::Status Client::Impl::SendRunJob(const v1::RunJobRequest& request,
                                      const JobRunOptions& options,
                                      v1::RunJobResponse* response) {
  // Never retried: a RunJob that reached the server may have dispatched.
  grpc::ClientContext context;
  Authorize(context);
  context.set_deadline(absl::ToChronoTime(absl::Now() + options.deadline));
  return proto::StatusFromGrpc(
      CoordinatorFor(request.job()).RunJob(&context, request, response));
}

absl::StatusOr<JobRun> Client::Impl::CallRunJob(
    const v1::RunJobRequest& request, const Mesh& mesh,
    const JobRunOptions& options, const executor::BatchWork* batch) {
  v1::RunJobResponse response;
  absl::Status s = SendRunJob(request, options, &response);
  if (!s.ok()) return s;
  absl::StatusOr<Mesh> run_mesh =
      response.has_mesh() ? proto::MeshFromProto(response.mesh()) : mesh;
  if (!run_mesh.ok()) return run_mesh.status();
  std::optional<JobRun::Cross> cross;
  if (response.has_cross()) {
    absl::StatusOr<proto::CrossPlanWithMeshes> plan =
        proto::CrossPlanFromProto(response.cross());
    if (!plan.ok()) return plan.status();
    cross = JobRun::Cross{std::move(plan->src_mesh), std::move(plan->dst_mesh),
                          std::move(plan->plan)};
  }
  absl::StatusOr<executor::BatchWork> work =
      cross.has_value() || response.has_cross_batch()
          ? executor::BatchWork()
          : proto::RanFromProto(*run_mesh, response, batch);
  if (!work.ok()) return work.status();
  JobRun run{
      response.run_id(),
      *std::move(run_mesh),
      *std::move(work),
      response.iters(),
      response.warmup(),
      std::string(BackendName(proto::BackendFromProto(response.backend()))),
      proto::RunSummaryFromProto(response),
      {},
      response.interrupted(),
      response.executions_completed(),
      response.committed(),
      std::move(cross),
      response.schedule_id(),
      response.plan_sent(),
      response.cross_batch().tensors()};
  for (const v1::RankReport& r : response.ranks()) {
    run.ranks.push_back(proto::RankReportFromProto(r));
  }
  return run;
}

absl::StatusOr<std::vector<JobInfo>> Client::ListJobs() {
  std::vector<JobInfo> jobs;
  for (size_t i = 0; i < impl_->coordinators.size(); ++i) {
    absl::Status s =
        EveryPage([&](const std::string& token, std::string* next) {
          v1::ListJobsRequest request;
          request.set_page_token(token);
          v1::ListJobsResponse response;
          absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
            return impl_->coordinators[i]->ListJobs(&ctx, request, &response);
          });
          for (const v1::JobInfo& job : response.jobs()) {
            jobs.push_back(JobInfoFromProto(job));
          }
          *next = response.next_page_token();
          return s;
        });
    if (!s.ok()) {
      if (impl_->coordinators.size() == 1) return s;
      return absl::Status(s.code(), absl::StrCat("replica ", impl_->replicas[i],
                                                 ": ", s.message()));
    }
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const JobInfo& a, const JobInfo& b) { return a.name < b.name; });
  return jobs;
}

absl::StatusOr<JobInfo> Client::GetJob(const std::string& job) {
  std::optional<JobInfo> info;
  absl::Status s = EveryPage([&](const std::string& token, std::string* next) {
    v1::GetJobRequest request;
    request.set_job(job);
    request.set_page_token(token);
    v1::GetJobResponse response;
    absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
      return impl_->CoordinatorFor(job).GetJob(&ctx, request, &response);
    });
    if (!s.ok()) return s;
    JobInfo page = JobInfoFromProto(response.job());
    if (!info.has_value()) {
      info = std::move(page);
    } else {
      info->agents.insert(info->agents.end(), page.agents.begin(),
                          page.agents.end());
    }
    *next = response.next_page_token();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return *std::move(info);
}

absl::StatusOr<std::string> Client::CancelJob(const std::string& job,
                                              bool stop) {
  v1::CancelJobRequest request;
  request.set_job(job);
  request.set_stop(stop);
  v1::CancelJobResponse response;
  absl::Status s = impl_->WithRetries([&](grpc::ClientContext& ctx) {
    return impl_->CoordinatorFor(job).CancelJob(&ctx, request, &response);
  });
  if (!s.ok()) return s;
  return response.run_id();
}

}  // namespace reshard
