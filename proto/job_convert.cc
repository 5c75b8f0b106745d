#include "proto/job_convert.h"

#include "proto/convert.h"
#include "proto/coordinator_convert.h"
#include "proto/cross_convert.h"

namespace reshard::proto {

coordinator::AgentId AgentIdFromProto(const v1::AgentId& proto) {
  return coordinator::AgentId{proto.job(), proto.rank(), proto.incarnation(),
                              proto.session()};
}

coordinator::JoinInfo JoinInfoFromProto(const v1::JoinRequest& proto) {
  coordinator::JoinInfo info;
  info.agent = AgentIdFromProto(proto.agent());
  info.world_size = proto.world_size();
  info.backend = BackendFromProto(proto.backend());
  info.version = proto.version();
  info.protocol = proto.protocol();
  info.host = proto.host();
  info.capabilities.assign(proto.capabilities().begin(),
                           proto.capabilities().end());
  return info;
}

namespace {

void RunToProto(const coordinator::RunWork& run, v1::RunWork* out) {
  out->set_run_id(run.run_id);
  out->set_generation(run.generation);
  *out->mutable_mesh() = MeshToProto(run.spec->mesh);
  out->set_schedule_id(run.spec->schedule_id);
  for (const std::string& id : run.live_schedules) out->add_live_schedules(id);
  if (const auto& cross = run.spec->cross; cross.has_value()) {
    // A schedule every agent keeps goes without its plan; otherwise no
    // transfers are listed: each agent expands its own by the sender rule.
    if (run.send_plan) {
      CrossPlanToProto(cross->src_mesh, cross->dst_mesh, cross->plan, 0,
                       out->mutable_cross());
    }
  } else if (!run.spec->cross_batch.empty()) {
    if (run.send_plan) {
      for (const executor::CrossWork& work : run.spec->cross_batch) {
        CrossPlanToProto(work.src_mesh, work.dst_mesh, work.plan, 0,
                         out->add_cross_batch());
      }
    }
    out->set_exchange_bytes(run.spec->exchange_bytes);
  } else {
    RunWorkToProto(run.spec->mesh, run.spec->work, out);
  }
  out->set_digest(run.digest);
  out->set_iters(run.spec->iters);
  out->set_warmup(run.spec->warmup);
  out->set_timeout_seconds(run.spec->timeout_seconds);
  out->set_comm_prefix(run.comm_prefix);
  for (const coordinator::TensorBinding& binding : run.spec->tensors) {
    v1::TensorBinding* b = out->add_tensors();
    b->set_source(binding.source);
    b->set_into(binding.into);
    b->set_allocate(binding.allocate);
  }
  out->set_no_staging(run.spec->no_staging);
}

}  // namespace

void WorkToProto(const coordinator::WorkItem& item, v1::Work* out) {
  switch (item.kind) {
    case coordinator::WorkItem::Kind::kRun:
      RunToProto(*item.run, out->mutable_run());
      break;
    case coordinator::WorkItem::Kind::kCancel:
      out->mutable_cancel()->set_run_id(item.run_id);
      break;
    case coordinator::WorkItem::Kind::kShutdown:
      out->mutable_shutdown()->set_reason(item.reason);
      break;
    case coordinator::WorkItem::Kind::kCommit:
      out->mutable_commit()->set_run_id(item.run_id);
      break;
  }
}

void JobSnapshotToProto(const coordinator::JobSnapshot& info,
                        v1::JobInfo* out) {
  out->set_name(info.name);
  out->set_world_size(info.world_size);
  out->set_backend(BackendToProto(info.backend));
  out->set_generation(info.generation);
  out->set_state(info.state);
  for (const coordinator::AgentInfo& agent : info.agents) {
    v1::AgentInfo* a = out->add_agents();
    a->set_rank(agent.rank);
    a->set_version(agent.version);
    a->set_host(agent.host);
    a->set_connected(agent.connected);
  }
  out->set_current_run(info.current_run);
  out->set_runs_total(info.runs_total);
  out->set_runs_failed(info.runs_failed);
  out->set_store_keys(info.store_keys);
  out->set_store_bytes(info.store_bytes);
  out->set_run_calls(info.run_calls);
  out->set_agents_joined(info.agents_joined);
  out->set_agents_connected(info.agents_connected);
  out->set_open(info.open);
  if (!info.current_run.empty()) {
    v1::RunProgress* progress = out->mutable_current_run_progress();
    progress->set_executions_done(info.current_run_progress.executions_done);
    progress->set_executions_total(info.current_run_progress.executions_total);
    progress->set_seconds(info.current_run_progress.seconds);
  }
  for (const coordinator::RunRecord& run : info.recent_runs) {
    v1::JobRun* r = out->add_recent_runs();
    r->set_run_id(run.run_id);
    r->set_result(run.result);
    r->set_error(run.error);
    r->set_seconds(run.seconds);
  }
  for (const coordinator::JobSnapshot::PreparedSchedule& s : info.schedules) {
    v1::PreparedSchedule* p = out->add_schedules();
    p->set_id(s.id);
    p->set_tensors(s.tensors);
    p->set_delivered(s.delivered);
  }
}

}  // namespace reshard::proto
