// The Coordinator requests and calls that the multi-process tests and
// fault_bench make through the real gRPC stub, each call bounded by a
// deadline so that nothing waits without end.
#ifndef RESHARD_TESTS_COORDINATOR_COORDINATOR_CALLS_H_
#define RESHARD_TESTS_COORDINATOR_COORDINATOR_CALLS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "proto/convert.h"
#include "reshard/v1/coordinator.grpc.pb.h"

namespace reshard::testing {

// RunJob of `S(0) -> R` over a 1-D mesh of `world` ranks (one all_gather
// of `elements` f32 values per execution); with iters large, a run that
// stays in flight long enough to be killed, cancelled or timed out.
inline v1::RunJobRequest AllGatherRun(const std::string& job, int world,
                                      int64_t elements, int iters,
                                      double collective_timeout_seconds) {
  v1::RunJobRequest request;
  request.set_job(job);
  v1::PlanRequest* r = request.mutable_request();
  r->mutable_mesh()->add_shape(world);
  r->mutable_tensor()->add_shape(elements);
  r->mutable_src()->set_text("S(0)");
  r->mutable_dst()->set_text("R");
  request.set_iters(iters);
  request.set_timeout_seconds(collective_timeout_seconds);
  return request;
}

inline grpc::Status CallRunJob(v1::Coordinator::Stub& stub,
                               const v1::RunJobRequest& request,
                               v1::RunJobResponse* response,
                               std::chrono::milliseconds deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  return stub.RunJob(&context, request, response);
}

inline absl::StatusOr<v1::JobInfo> CallGetJob(v1::Coordinator::Stub& stub,
                                              const std::string& job) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  v1::GetJobRequest request;
  request.set_job(job);
  v1::GetJobResponse response;
  const grpc::Status status = stub.GetJob(&context, request, &response);
  if (!status.ok()) return proto::StatusFromGrpc(status);
  return response.job();
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_COORDINATOR_COORDINATOR_CALLS_H_
