// Conversion between the Coordinator's wire messages (coordinator.proto)
// and its core types (coordinator/): agents, joins, work and jobs. The
// server converts here and nowhere else; the agent reads Work with
// convert.h's mesh and plan functions.
#ifndef RESHARD_PROTO_JOB_CONVERT_H_
#define RESHARD_PROTO_JOB_CONVERT_H_

#include "coordinator/job.h"
#include "coordinator/membership.h"
#include "coordinator/work.h"
#include "reshard/v1/coordinator.pb.h"

namespace reshard::proto {

coordinator::AgentId AgentIdFromProto(const v1::AgentId& proto);
coordinator::JoinInfo JoinInfoFromProto(const v1::JoinRequest& proto);
// A run carries its mesh and plan in full (converted per agent stream).
void WorkToProto(const coordinator::WorkItem& item, v1::Work* out);
void JobSnapshotToProto(const coordinator::JobSnapshot& info, v1::JobInfo* out);

}  // namespace reshard::proto

#endif  // RESHARD_PROTO_JOB_CONVERT_H_
