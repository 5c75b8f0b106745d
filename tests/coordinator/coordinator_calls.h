// The Coordinator calls that the multi-process tests make through the real
// gRPC stub, each bounded by a deadline so that no test waits without end.
#ifndef RESHARD_TESTS_COORDINATOR_COORDINATOR_CALLS_H_
#define RESHARD_TESTS_COORDINATOR_COORDINATOR_CALLS_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "proto/convert.h"
#include "reshard/v1/coordinator.grpc.pb.h"

namespace reshard::testing {

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
  if (!status.ok()) return StatusFromGrpc(status);
  return response.job();
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_COORDINATOR_COORDINATOR_CALLS_H_
