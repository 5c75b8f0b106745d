#include "server/coordinator_service.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/echoed_text.h"
#include "common/incarnation_text.h"
#include "common/tensor_name.h"
#include "common/version.h"
#include "planner/cross/cross_planner.h"
#include "proto/convert.h"
#include "proto/coordinator_convert.h"
#include "proto/cross_convert.h"
#include "proto/job_convert.h"
#include "server/caller_credentials.h"
#include "server/cross_mesh_request.h"
#include "server/dispatch_stream.h"
#include "server/message_bounds.h"
#include "server/pages.h"
#include "server/service_call.h"
#include "server/store_get_call.h"
#include "spdlog/spdlog.h"

namespace reshard::server {
namespace {

// A RunJob whose caller set no deadline still ends.
constexpr absl::Duration kRunJobDefaultDeadline = absl::Minutes(10);
// RunJob's defaults for fields left 0 (docs/DESIGN.md §6.3: iters after
// warmup).
constexpr int kDefaultIters = 10;
constexpr double kDefaultTimeoutSeconds = 30;

absl::Time CallDeadline(std::chrono::system_clock::time_point call_deadline,
                        absl::Duration fallback) {
  return std::min(absl::FromChrono(call_deadline), absl::Now() + fallback);
}

// A given plan's refusal, its field named from the request's root
// ("plan.plan.tensor.shape: ...").
absl::Status Within(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace

namespace {

// `call(job, id)` on the job of the agent `agent` names, for a call with
// `ctx`'s credentials: its answer, or the refusal of the credentials or
// the lookup (NOT_FOUND naming agent.job).
template <typename Call>
auto InAgentJob(const coordinator::Coordinator& core,
                const grpc::ServerContext& ctx, const std::string& admin_token,
                const v1::AgentId& agent, Call call) {
  const coordinator::AgentId id = proto::AgentIdFromProto(agent);
  absl::StatusOr<coordinator::Caller> caller = CallerOf(ctx, admin_token);
  absl::StatusOr<std::shared_ptr<coordinator::Job>> job =
      caller.ok() ? core.JobOf(id, *caller) : caller.status();
  using Result = decltype(call(**job, id));
  if (!job.ok()) return Result(job.status());
  return call(**job, id);
}

}  // namespace

grpc::Status CoordinatorService::Serve(grpc::ServerContextBase* ctx,
                                       const char* method,
                                       const google::protobuf::Message& request,
                                       google::protobuf::Message* response,
                                       ServiceCall::Drain drain,
                                       absl::FunctionRef<absl::Status()> body) {
  ServiceCall call(gate_, *ctx, method, MethodMetrics(method), request,
                   options_, drain);
  absl::Status status = call.refusal();
  if (status.ok()) status = body();
  return call.End(status, response);
}

RpcMethodMetrics* CoordinatorService::MethodMetrics(const char* method) const {
  return metrics_ == nullptr ? nullptr : metrics_->Method(method);
}

absl::StatusOr<coordinator::Caller> CoordinatorService::CredentialsOf(
    const grpc::ServerContextBase& ctx) const {
  return CallerOf(ctx, options_.admin_token);
}

void CoordinatorService::StartDraining() {
  gate_.StartDraining();
  core_.Shutdown("the server is shutting down");
}

grpc::Status CoordinatorService::Join(grpc::ServerContext* ctx,
                                      const v1::JoinRequest* request,
                                      v1::JoinResponse* response) {
  return Serve(ctx, "Join", *request, response, ServiceCall::Drain::kRefuse,
               [&]() -> absl::Status {
                 absl::StatusOr<coordinator::Caller> caller =
                     CredentialsOf(*ctx);
                 if (!caller.ok()) return caller.status();
                 absl::StatusOr<coordinator::Joined> joined =
                     core_.Join(proto::JoinInfoFromProto(*request), *caller);
                 if (!joined.ok()) return joined.status();
                 response->set_generation(joined->generation);
                 response->set_coordinator_version(kReshardVersion);
                 response->set_session(joined->session);  // never logged
                 spdlog::info(
                     "job={} rank={} incarnation={} version={} joined; "
                     "generation {}",
                     request->agent().job(), request->agent().rank(),
                     IncarnationText(request->agent().incarnation()),
                     request->version(), joined->generation);
                 return absl::OkStatus();
               });
}

grpc::ServerWriteReactor<v1::Work>* CoordinatorService::Dispatch(
    grpc::CallbackServerContext* ctx, const v1::DispatchRequest* request) {
  const auto start = std::chrono::steady_clock::now();
  const coordinator::AgentId id = proto::AgentIdFromProto(request->agent());
  ServiceCall call(gate_, *ctx, "Dispatch", MethodMetrics("Dispatch"), *request,
                   options_);
  absl::StatusOr<std::shared_ptr<coordinator::Mailbox>> mailbox =
      call.refusal().ok() ? OpenMailbox(*ctx, id) : call.refusal();
  if (!mailbox.ok()) {
    return new RefusedStream(call.End(mailbox.status(), nullptr));
  }
  return new DispatchStream(
      *mailbox, [this, id, mailbox = *mailbox, start](const grpc::Status& s) {
        core_.Disconnect(id, mailbox);
        spdlog::info("job={} rank={} dispatch stream closed", id.job, id.rank);
        RecordDispatch(s, start);
      });
}

absl::StatusOr<std::shared_ptr<coordinator::Mailbox>>
CoordinatorService::OpenMailbox(const grpc::ServerContextBase& ctx,
                                const coordinator::AgentId& id) {
  absl::StatusOr<coordinator::Caller> caller = CredentialsOf(ctx);
  if (!caller.ok()) return caller.status();
  return core_.Connect(id, *caller);
}

void CoordinatorService::RecordDispatch(
    const grpc::Status& status, std::chrono::steady_clock::time_point start) {
  if (metrics_ == nullptr) return;
  metrics_->RecordCall(
      "Dispatch", static_cast<absl::StatusCode>(status.error_code()),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
}

grpc::Status CoordinatorService::Report(grpc::ServerContext* ctx,
                                        const v1::ReportRequest* request,
                                        v1::ReportResponse* response) {
  return Serve(
      ctx, "Report", *request, response, ServiceCall::Drain::kServe,
      [&]() -> absl::Status {
        return InAgentJob(
            core_, *ctx, options_.admin_token, request->agent(),
            [&](coordinator::Job& job, const coordinator::AgentId& id) {
              return job.Report(id, request->generation(), request->run_id(),
                                proto::RankReportFromProto(request->report()));
            });
      });
}

grpc::Status CoordinatorService::Committed(grpc::ServerContext* ctx,
                                           const v1::CommittedRequest* request,
                                           v1::CommittedResponse* response) {
  return Serve(
      ctx, "Committed", *request, response, ServiceCall::Drain::kServe,
      [&]() -> absl::Status {
        return InAgentJob(
            core_, *ctx, options_.admin_token, request->agent(),
            [&](coordinator::Job& job, const coordinator::AgentId& id) {
              return job.Committed(
                  id, request->run_id(),
                  proto::StatusFromCode(request->code(), request->error()));
            });
      });
}

grpc::Status CoordinatorService::Progress(grpc::ServerContext* ctx,
                                          const v1::ProgressRequest* request,
                                          v1::ProgressResponse* response) {
  return Serve(
      ctx, "Progress", *request, response, ServiceCall::Drain::kServe,
      [&]() -> absl::Status {
        return InAgentJob(
            core_, *ctx, options_.admin_token, request->agent(),
            [&](coordinator::Job& job, const coordinator::AgentId& id) {
              return job.Progress(id, request->run_id(),
                                  request->executions_done());
            });
      });
}

grpc::Status CoordinatorService::Leave(grpc::ServerContext* ctx,
                                       const v1::LeaveRequest* request,
                                       v1::LeaveResponse* response) {
  return Serve(
      ctx, "Leave", *request, response, ServiceCall::Drain::kServe,
      [&]() -> absl::Status {
        absl::StatusOr<coordinator::Caller> caller = CredentialsOf(*ctx);
        if (!caller.ok()) return caller.status();
        return core_.Leave(proto::AgentIdFromProto(request->agent()), *caller);
      });
}

grpc::Status CoordinatorService::StoreSet(grpc::ServerContext* ctx,
                                          const v1::StoreSetRequest* request,
                                          v1::StoreSetResponse* response) {
  return Serve(
      ctx, "StoreSet", *request, response, ServiceCall::Drain::kServe,
      [&]() -> absl::Status {
        return InAgentJob(
            core_, *ctx, options_.admin_token, request->agent(),
            [&](coordinator::Job& job, const coordinator::AgentId& id) {
              return job.StoreSet(id, request->run_id(), request->key(),
                                  request->value());
            });
      });
}

grpc::ServerUnaryReactor* CoordinatorService::StoreGet(
    grpc::CallbackServerContext* ctx, const v1::StoreGetRequest* request,
    v1::StoreGetResponse* response) {
  auto* reactor = new StoreGetCall();
  auto call = std::make_shared<ServiceCall>(
      gate_, *ctx, "StoreGet", MethodMetrics("StoreGet"), *request, options_);
  auto finish = [reactor, call, response](const absl::Status& status) {
    reactor->Finish(call->End(status, response));
  };
  absl::Status refused = call->refusal();
  absl::StatusOr<coordinator::Caller> caller = CredentialsOf(*ctx);
  if (refused.ok() && !caller.ok()) refused = caller.status();
  absl::StatusOr<coordinator::Coordinator::StoreWait> wait =
      refused.ok()
          ? core_.AwaitStore(
                proto::AgentIdFromProto(request->agent()), request->run_id(),
                {request->keys().begin(), request->keys().end()},
                [finish,
                 response](absl::StatusOr<std::vector<std::string>> values) {
                  if (values.ok()) {
                    for (std::string& value : *values) {
                      response->add_values(std::move(value));
                    }
                  }
                  finish(values.status());
                },
                *caller)
          : refused;
  if (!wait.ok()) {
    finish(wait.status());
    return reactor;
  }
  const double seconds = std::clamp(request->wait_seconds(), 0.0, 3600.0);
  reactor->Watch(*wait, CallDeadline(ctx->deadline(), absl::Seconds(seconds)));
  return reactor;
}

grpc::Status CoordinatorService::StoreDelete(
    grpc::ServerContext* ctx, const v1::StoreDeleteRequest* request,
    v1::StoreDeleteResponse* response) {
  return Serve(
      ctx, "StoreDelete", *request, response, ServiceCall::Drain::kServe,
      [&]() -> absl::Status {
        absl::StatusOr<int64_t> deleted = InAgentJob(
            core_, *ctx, options_.admin_token, request->agent(),
            [&](coordinator::Job& job, const coordinator::AgentId& id) {
              return job.StoreDelete(id, request->run_id(), request->prefix());
            });
        if (!deleted.ok()) return deleted.status();
        response->set_deleted(*deleted);
        return absl::OkStatus();
      });
}

namespace {

// A given batch: at most `limits.max_batch_items` items (as PlanBatch), its
// mesh, its work checked (BatchWorkFromProto) and its names, `item I` for
// those not given.
absl::StatusOr<coordinator::RunSpec> BatchSpecOf(const v1::GivenBatch& given,
                                                 const ServiceOptions& limits) {
  const int items = given.work().batch().plans_size();
  if (items > limits.max_batch_items) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch.work.batch.plans: ", items, " items, at most ",
                     limits.max_batch_items, " per batch"));
  }
  absl::StatusOr<Mesh> mesh = proto::MeshFromProto(given.mesh());
  if (!mesh.ok()) return Within("batch.mesh.", mesh.status());
  absl::StatusOr<executor::BatchWork> work =
      proto::BatchWorkFromProto(*mesh, given.work());
  if (!work.ok()) return Within("batch.work.", work.status());
  if (given.names_size() > static_cast<int>(work->plans.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch.names: ", given.names_size(), " names for ",
                     work->plans.size(), " items"));
  }
  for (int i = 0; i < given.names_size(); ++i) {
    work->names[i] = given.names(i);
  }
  return coordinator::RunSpec{*std::move(mesh), *std::move(work)};
}

// A cross-mesh batch's shape, given or planned here (`field`: the
// message, `items_field`: its tensors): 1 to `limits.max_batch_items`
// tensors, an exchange bound of at least one byte, no more names than
// tensors.
absl::Status CheckCrossBatchShape(const std::string& field,
                                  const char* items_field, int items, int names,
                                  int64_t exchange_bytes,
                                  const ServiceOptions& limits) {
  if (items < 1 || items > limits.max_batch_items) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".", items_field, ": ", items, " items, 1 to ",
                     limits.max_batch_items, " per batch"));
  }
  if (exchange_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".exchange_bytes: must be at least 1, got ", exchange_bytes));
  }
  if (names > items) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".names: ", names, " names for ", items, " items"));
  }
  return absl::OkStatus();
}

// The run of a cross-mesh batch's tensors (`items_field`: where they came
// from, naming the first whose destination mesh is not the first's), named
// by `names` (`item I` where missing), over the union of every rank map.
absl::StatusOr<coordinator::RunSpec> CrossBatchSpec(
    std::vector<executor::CrossWork> works,
    const google::protobuf::RepeatedPtrField<std::string>& names,
    int64_t exchange_bytes, const std::string& items_field) {
  coordinator::RunSpec spec{*Mesh::Create({{1}, {"ranks"}, {0}}), {}};
  for (size_t t = 0; t < works.size(); ++t) {
    if (!(works[t].dst_mesh == works.front().dst_mesh)) {
      return absl::InvalidArgumentError(
          absl::StrCat(items_field, "[", t, "].dst_mesh: not ", items_field,
                       "[0]'s; a batch has one destination mesh"));
    }
    spec.cross_names.push_back(static_cast<int>(t) < names.size()
                                   ? names[static_cast<int>(t)]
                                   : absl::StrCat("item ", t));
  }
  spec.cross_batch = std::move(works);
  absl::StatusOr<Mesh> mesh = executor::CrossBatchRanksMesh(spec.cross_batch);
  if (!mesh.ok()) return Within(items_field + ": ", mesh.status());
  spec.mesh = *std::move(mesh);
  spec.exchange_bytes = exchange_bytes;
  return spec;
}

// A given cross-mesh batch: its shape checked, every plan with its meshes
// (CrossPlanFromProto).
absl::StatusOr<coordinator::RunSpec> CrossBatchSpecOf(
    const v1::GivenCrossBatch& given, const ServiceOptions& limits) {
  absl::Status s =
      CheckCrossBatchShape("cross_batch", "plans", given.plans_size(),
                           given.names_size(), given.exchange_bytes(), limits);
  if (!s.ok()) return s;
  std::vector<executor::CrossWork> works;
  for (int t = 0; t < given.plans_size(); ++t) {
    absl::StatusOr<proto::CrossPlanWithMeshes> plan =
        proto::CrossPlanFromProto(given.plans(t));
    if (!plan.ok()) {
      return Within(absl::StrCat("cross_batch.plans[", t, "]."), plan.status());
    }
    works.push_back({std::move(plan->src_mesh), std::move(plan->dst_mesh),
                     std::move(plan->plan)});
  }
  return CrossBatchSpec(std::move(works), given.names(), given.exchange_bytes(),
                        "cross_batch.plans");
}

// RunJobRequest.tensors into `spec` (docs/DESIGN.md §6.6): one binding per
// item, valid names, no destination written twice, one execution.
absl::Status BindTensors(const v1::RunJobRequest& request,
                         coordinator::RunSpec& spec) {
  if (request.tensors_size() == 0) {
    if (!request.no_staging()) return absl::OkStatus();
    return absl::InvalidArgumentError("no_staging: only with tensors");
  }
  const size_t items = !spec.cross_batch.empty() ? spec.cross_batch.size()
                       : spec.cross.has_value()  ? 1
                                                 : spec.work.plans.size();
  if (static_cast<size_t>(request.tensors_size()) != items) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensors: ", request.tensors_size(), " bindings for ", items,
        items == 1 ? " item" : " items", " (one per item)"));
  }
  if (request.iters() > 1 || request.warmup() != 0) {
    return absl::InvalidArgumentError(
        "iters: a run on registered tensors executes once, with no warm-up "
        "(iters 0 or 1, warmup 0)");
  }
  std::set<std::string> written;
  for (int i = 0; i < request.tensors_size(); ++i) {
    const v1::TensorBinding& b = request.tensors(i);
    const std::string field = absl::StrCat("tensors[", i, "]");
    absl::Status s = CheckTensorName(field + ".source", b.source());
    if (s.ok()) s = CheckTensorName(field + ".into", b.into());
    if (!s.ok()) return s;
    if (!written.insert(b.into()).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".into: \"", b.into(), "\" is written by an earlier item"));
    }
    if (request.no_staging() && b.into() == b.source()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field,
                       ".into: the source itself; without staging a run cannot "
                       "write where it reads"));
    }
    spec.tensors.push_back({b.source(), b.into(), b.allocate()});
  }
  spec.iters = 1;
  spec.warmup = 0;
  spec.no_staging = request.no_staging();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const coordinator::RunSpec>>
CoordinatorService::SpecOf(grpc::ServerContext* ctx,
                           const v1::RunJobRequest& request) {
  absl::StatusOr<coordinator::RunSpec> spec;
  if (request.has_cross()) {
    spec = CrossSpecOf(ctx, request.cross());
  } else if (request.source_case() == v1::RunJobRequest::kScheduleId) {
    spec = ScheduledSpecOf(ctx, request);
  } else if (request.has_batch()) {
    spec = BatchSpecOf(request.batch(), options_);
  } else if (request.has_cross_batch()) {
    spec = CrossBatchSpecOf(request.cross_batch(), options_);
  } else if (request.has_cross_batch_request()) {
    spec = PlannedCrossBatchSpecOf(ctx, request.cross_batch_request());
  } else {
    absl::StatusOr<std::pair<Mesh, Plan>> planned = PlanOf(ctx, request);
    if (!planned.ok()) return planned.status();
    executor::BatchWork work =
        executor::BatchWork::OfPlan(planned->first, std::move(planned->second));
    spec = coordinator::RunSpec{std::move(planned->first), std::move(work)};
  }
  if (!spec.ok()) return spec.status();
  spec->iters = request.iters() == 0 ? kDefaultIters : request.iters();
  spec->warmup = request.warmup();
  spec->timeout_seconds = request.timeout_seconds() == 0
                              ? kDefaultTimeoutSeconds
                              : request.timeout_seconds();
  spec->agent_wait_seconds = request.agent_wait_seconds();
  absl::Status s = BindTensors(request, *spec);
  if (!s.ok()) return s;
  return std::make_shared<const coordinator::RunSpec>(*std::move(spec));
}

absl::StatusOr<executor::CrossWork> CoordinatorService::PlanCross(
    grpc::ServerContext* ctx, const v1::PlanCrossMeshRequest& request,
    const std::string& field) {
  absl::StatusOr<CrossMeshCall> call =
      CrossMeshCallOf(registry_, request, options_);
  if (!call.ok()) return Within(field, call.status());
  const std::string credential = CredentialOf(*ctx, options_).value_or("");
  call->request.cache_scope = CacheScopeOf(credential);
  absl::StatusOr<CrossMeshPlan> plan = MakeCrossMeshPlan(
      *call->src_mesh, *call->dst_mesh, call->request, &cache_,
      StopAt(ctx->deadline(), [ctx] { return ctx->IsCancelled(); }));
  if (!plan.ok()) return Within(field, plan.status());
  return executor::CrossWork{*call->src_mesh, *call->dst_mesh,
                             *std::move(plan)};
}

absl::StatusOr<coordinator::RunSpec> CoordinatorService::CrossSpecOf(
    grpc::ServerContext* ctx, const v1::PlanCrossMeshRequest& request) {
  absl::StatusOr<executor::CrossWork> cross = PlanCross(ctx, request, "cross.");
  if (!cross.ok()) return cross.status();
  absl::StatusOr<Mesh> ranks = cross->RanksMesh();
  if (!ranks.ok()) return ranks.status();
  coordinator::RunSpec spec{*std::move(ranks), {}};
  spec.cross = *std::move(cross);
  return spec;
}

absl::StatusOr<coordinator::RunSpec>
CoordinatorService::PlannedCrossBatchSpecOf(
    grpc::ServerContext* ctx, const v1::CrossBatchRequest& request) {
  absl::Status s = CheckCrossBatchShape(
      "cross_batch_request", "tensors", request.tensors_size(),
      request.names_size(), request.exchange_bytes(), options_);
  if (!s.ok()) return s;
  std::vector<executor::CrossWork> works;
  for (int t = 0; t < request.tensors_size(); ++t) {
    absl::StatusOr<executor::CrossWork> work =
        PlanCross(ctx, request.tensors(t),
                  absl::StrCat("cross_batch_request.tensors[", t, "]."));
    if (!work.ok()) return work.status();
    works.push_back(*std::move(work));
  }
  return CrossBatchSpec(std::move(works), request.names(),
                        request.exchange_bytes(),
                        "cross_batch_request.tensors");
}

absl::StatusOr<coordinator::RunSpec> CoordinatorService::ScheduledSpecOf(
    grpc::ServerContext* ctx, const v1::RunJobRequest& request) {
  absl::StatusOr<coordinator::Caller> caller = CredentialsOf(*ctx);
  if (!caller.ok()) return caller.status();
  absl::StatusOr<std::shared_ptr<const coordinator::RunSpec>> kept =
      core_.Scheduled(request.job(), request.schedule_id(), *caller);
  if (!kept.ok()) return kept.status();
  coordinator::RunSpec spec = **kept;
  spec.schedule_id = request.schedule_id();
  return spec;
}

absl::StatusOr<std::pair<Mesh, Plan>> CoordinatorService::PlanOf(
    grpc::ServerContext* ctx, const v1::RunJobRequest& request) {
  if (request.has_plan()) {
    absl::StatusOr<Mesh> mesh = proto::MeshFromProto(request.plan().mesh());
    if (!mesh.ok()) return Within("plan.mesh.", mesh.status());
    absl::StatusOr<Plan> plan =
        proto::PlanFromProto(*mesh, request.plan().plan());
    if (!plan.ok()) return Within("plan.plan.", plan.status());
    return std::pair{*std::move(mesh), *std::move(plan)};
  }
  if (!request.has_request()) {
    return absl::InvalidArgumentError("source: set request, plan or batch");
  }
  const v1::PlanRequest& r = request.request();
  absl::StatusOr<std::shared_ptr<const Mesh>> mesh = RequestMesh(registry_, r);
  if (!mesh.ok()) return mesh.status();
  // A token the rules refuse plans in the anonymous share, as without one:
  // the run is then answered by the Coordinator, as for a missing job
  // unless the job is open (no existence oracle, docs/DESIGN.md §5).
  const std::string credential = CredentialOf(*ctx, options_).value_or("");
  absl::StatusOr<PlanRequest> plan_request =
      LimitedPlanRequest(**mesh, r.tensor(), r.src(), r.dst(), r.options(),
                         options_, CacheScopeOf(credential));
  if (!plan_request.ok()) return plan_request.status();
  absl::StatusOr<Plan> plan = PlanThroughPool(
      **mesh, *plan_request, cache_, pool_,
      StopAt(ctx->deadline(), [ctx] { return ctx->IsCancelled(); }));
  if (!plan.ok()) return plan.status();
  return std::pair{**mesh, *std::move(plan)};
}

namespace {

void FillRunResponse(const coordinator::RunSpec& spec,
                     const coordinator::RunOutcome& outcome,
                     v1::RunJobResponse* response) {
  response->set_run_id(outcome.run_id);
  response->set_backend(proto::BackendToProto(outcome.backend));
  *response->mutable_mesh() = proto::MeshToProto(spec.mesh);
  response->set_iters(spec.iters);
  response->set_warmup(spec.warmup);
  if (spec.cross.has_value()) {
    proto::CrossPlanToProto(spec.cross->src_mesh, spec.cross->dst_mesh,
                            spec.cross->plan, 0, response->mutable_cross());
  } else if (!spec.cross_batch.empty()) {
    v1::CrossBatchRunInfo* info = response->mutable_cross_batch();
    info->set_tensors(static_cast<int>(spec.cross_batch.size()));
    info->set_exchange_bytes(spec.exchange_bytes);
  } else {
    proto::RanToProto(spec.mesh, spec.work, response);
  }
  proto::RunSummaryToProto(outcome.summary, response);
  int done = -1;
  for (const executor::RankReport& report : outcome.reports) {
    v1::RankReport* rank = response->add_ranks();
    proto::RankReportToProto(report, rank, proto::ExecutionSeconds::kOmit);
    done = done < 0 ? report.executions_done
                    : std::min(done, report.executions_done);
  }
  response->set_interrupted(outcome.interrupted);
  response->set_committed(outcome.committed);
  response->set_schedule_id(spec.schedule_id);
  response->set_plan_sent(outcome.plan_sent);
  response->set_executions_completed(std::max(done, 0));
}

}  // namespace

absl::StatusOr<coordinator::RunOutcome> CoordinatorService::Run(
    grpc::ServerContext* ctx, const v1::RunJobRequest& request,
    v1::RunJobResponse* response) {
  absl::StatusOr<coordinator::Caller> caller = CredentialsOf(*ctx);
  if (!caller.ok()) return caller.status();
  absl::Status admitted = core_.CheckActor(request.job(), *caller);
  if (!admitted.ok()) return admitted;
  absl::StatusOr<std::shared_ptr<const coordinator::RunSpec>> spec =
      SpecOf(ctx, request);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<coordinator::RunOutcome> outcome = core_.RunJob(
      request.job(), *spec,
      CallDeadline(ctx->deadline(), kRunJobDefaultDeadline),
      [ctx] { return ctx->IsCancelled(); }, *caller);
  if (outcome.ok()) FillRunResponse(**spec, *outcome, response);
  return outcome;
}

grpc::Status CoordinatorService::RunJob(grpc::ServerContext* ctx,
                                        const v1::RunJobRequest* request,
                                        v1::RunJobResponse* response) {
  return Serve(
      ctx, "RunJob", *request, response, ServiceCall::Drain::kRefuse,
      [&]() -> absl::Status {
        const auto start = std::chrono::steady_clock::now();
        absl::StatusOr<coordinator::RunOutcome> outcome =
            Run(ctx, *request, response);
        const bool validated = outcome.ok() && outcome->summary.validated;
        if (metrics_ != nullptr) {
          // A run its caller stopped counts as cancelled.
          const absl::Status counted = outcome.ok() && outcome->interrupted
                                           ? absl::CancelledError("stopped")
                                           : outcome.status();
          metrics_->RecordRun(JobRunResultOf(counted, validated),
                              std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
        }
        if (!outcome.ok()) return outcome.status();
        spdlog::info("job={} run={} ranks={} validated={} wall={:.3f}s",
                     request->job(), outcome->run_id, outcome->reports.size(),
                     validated, outcome->summary.wall_seconds);
        return absl::OkStatus();
      });
}

grpc::Status CoordinatorService::ListJobs(grpc::ServerContext* ctx,
                                          const v1::ListJobsRequest* request,
                                          v1::ListJobsResponse* response) {
  return Serve(ctx, "ListJobs", *request, response, ServiceCall::Drain::kServe,
               [&]() -> absl::Status {
                 absl::StatusOr<coordinator::Caller> caller =
                     CredentialsOf(*ctx);
                 if (!caller.ok()) return caller.status();
                 return FillJobsPage(core_, *caller, *request,
                                     options_.max_message_bytes, response);
               });
}

grpc::Status CoordinatorService::GetJob(grpc::ServerContext* ctx,
                                        const v1::GetJobRequest* request,
                                        v1::GetJobResponse* response) {
  return Serve(ctx, "GetJob", *request, response, ServiceCall::Drain::kServe,
               [&]() -> absl::Status {
                 absl::StatusOr<coordinator::Caller> caller =
                     CredentialsOf(*ctx);
                 if (!caller.ok()) return caller.status();
                 return FillJobPage(core_, *caller, *request,
                                    options_.max_message_bytes, response);
               });
}

grpc::Status CoordinatorService::CancelJob(grpc::ServerContext* ctx,
                                           const v1::CancelJobRequest* request,
                                           v1::CancelJobResponse* response) {
  return Serve(ctx, "CancelJob", *request, response, ServiceCall::Drain::kServe,
               [&]() -> absl::Status {
                 absl::StatusOr<coordinator::Caller> caller =
                     CredentialsOf(*ctx);
                 if (!caller.ok()) return caller.status();
                 absl::StatusOr<std::string> run =
                     core_.CancelJob(request->job(), request->stop(), *caller);
                 if (!run.ok()) return run.status();
                 response->set_run_id(*run);
                 return absl::OkStatus();
               });
}

grpc::Status CoordinatorService::PrepareCrossMesh(
    grpc::ServerContext* ctx, const v1::PrepareCrossMeshRequest* request,
    v1::PrepareCrossMeshResponse* response) {
  return Serve(
      ctx, "PrepareCrossMesh", *request, response, ServiceCall::Drain::kRefuse,
      [&]() -> absl::Status {
        absl::StatusOr<coordinator::Caller> caller = CredentialsOf(*ctx);
        if (!caller.ok()) return caller.status();
        absl::Status admitted = core_.CheckActor(request->job(), *caller);
        if (!admitted.ok()) return admitted;
        absl::StatusOr<coordinator::RunSpec> spec =
            request->has_cross_batch()
                ? CrossBatchSpecOf(request->cross_batch(), options_)
            : request->has_cross_batch_request()
                ? PlannedCrossBatchSpecOf(ctx, request->cross_batch_request())
                : CrossSpecOf(ctx, request->cross());
        if (!spec.ok()) return spec.status();
        auto kept =
            std::make_shared<const coordinator::RunSpec>(*std::move(spec));
        absl::StatusOr<coordinator::PreparedSchedule> prepared =
            core_.PrepareSchedule(request->job(), kept, *caller);
        if (!prepared.ok()) return prepared.status();
        response->set_schedule_id(prepared->id);
        response->set_generation(prepared->generation);
        response->set_schedules(static_cast<int32_t>(prepared->schedules));
        if (kept->cross.has_value()) {
          proto::CrossPlanToProto(kept->cross->src_mesh, kept->cross->dst_mesh,
                                  kept->cross->plan, 0,
                                  response->mutable_plan());
        } else {
          v1::CrossBatchRunInfo* info = response->mutable_cross_batch();
          info->set_tensors(static_cast<int>(kept->cross_batch.size()));
          info->set_exchange_bytes(kept->exchange_bytes);
        }
        spdlog::info("job={} schedule={} prepared (generation {})",
                     request->job(), prepared->id, prepared->generation);
        return absl::OkStatus();
      });
}

grpc::Status CoordinatorService::DeleteSchedule(
    grpc::ServerContext* ctx, const v1::DeleteScheduleRequest* request,
    v1::DeleteScheduleResponse* response) {
  return Serve(ctx, "DeleteSchedule", *request, response,
               ServiceCall::Drain::kServe, [&]() -> absl::Status {
                 absl::StatusOr<coordinator::Caller> caller =
                     CredentialsOf(*ctx);
                 if (!caller.ok()) return caller.status();
                 return core_.DeleteSchedule(request->job(),
                                             request->schedule_id(), *caller);
               });
}

}  // namespace reshard::server
