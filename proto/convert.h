// Conversion between the wire schema (reshard.v1 protos) and the core
// planner types — the one place where the service, the client and the
// executor meet generated code. Errors are INVALID_ARGUMENT naming the
// request field.
#ifndef RESHARD_PROTO_CONVERT_H_
#define RESHARD_PROTO_CONVERT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/support/status.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"
#include "planner/search/planner.h"
#include "reshard/v1/planner.pb.h"

namespace reshard::proto {

// absl::Status <-> grpc::Status: the codes are the same google.rpc.Code
// values in both, and the message is kept.
grpc::Status StatusToGrpc(const absl::Status& status);
absl::Status StatusFromGrpc(const grpc::Status& status);

// INVALID_ARGUMENT naming tensor.dtype for a value this version does not
// know; DTYPE_UNSPECIFIED is float32.
absl::StatusOr<DType> DTypeFromProto(v1::DType dtype);
v1::DType DTypeToProto(DType dtype);

LinkParams LinkFromProto(const v1::LinkParams& proto);
v1::LinkParams LinkToProto(const LinkParams& link);

absl::StatusOr<Mesh> MeshFromProto(const v1::Mesh& proto);
v1::Mesh MeshToProto(const Mesh& mesh);
MeshSpec MeshSpecFromProto(const v1::Mesh& proto);

// A stable content hash of everything a mesh is (shape, names, rank map,
// flattened groups, links): the same mesh has the same id on every replica.
std::string MeshId(const Mesh& mesh);

// Builds a planning request; `default_budget` replaces an unset budget.
absl::StatusOr<PlanRequest> PlanRequestFromProto(const Mesh& mesh,
                                                 const v1::Tensor& tensor,
                                                 const v1::DistState& src,
                                                 const v1::DistState& dst,
                                                 const v1::PlanOptions& options,
                                                 int64_t default_budget);

// The planner a request asks for (UNSPECIFIED: optimal); INVALID_ARGUMENT
// naming options.planner for values this build does not know.
absl::StatusOr<PlannerKind> PlannerFromProto(v1::PlannerKind planner);

// The proto forms of a core request (for clients).
v1::Tensor TensorToProto(const TensorSpec& tensor);
v1::DistState StateToProto(const DistState& state);
v1::PlanOptions OptionsToProto(const PlanOptions& options);

// The wire form of a reduce op (steps and buckets carry it).
v1::ReduceOp ReduceOpToProto(ReduceOp op);

void PlanToProto(const Mesh& mesh, const Plan& plan, v1::Plan* proto);
// Rebuilds a core Plan from its proto (states are re-parsed and checked).
absl::StatusOr<Plan> PlanFromProto(const Mesh& mesh, const v1::Plan& proto);

}  // namespace reshard::proto

#endif  // RESHARD_PROTO_CONVERT_H_
