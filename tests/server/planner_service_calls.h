// What planner_service_test.cc and planner_service_load_test.cc share: a
// client of real reshard-planner processes, plan requests, raw stub calls
// (the server's exact answer) and plans compared without their per-call
// fields.
#ifndef RESHARD_TESTS_SERVER_PLANNER_SERVICE_CALLS_H_
#define RESHARD_TESTS_SERVER_PLANNER_SERVICE_CALLS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/format/plan_format.h"
#include "planner/search/planner.h"
#include "proto/convert.h"
#include "reshard/client.h"
#include "reshard/v1/planner.grpc.pb.h"

namespace reshard::testing {

inline std::unique_ptr<Client> Connect(const std::string& target,
                                       int attempts = 5) {
  ClientOptions options;
  options.target = target;
  options.max_attempts = attempts;
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

inline PlanRequest Request(const Mesh& mesh, std::vector<int64_t> shape,
                           const std::string& src, const std::string& dst,
                           PlanOptions options = {}) {
  absl::StatusOr<PlanRequest> r =
      ParsePlanRequest(mesh, std::move(shape), "f32", src, dst, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

// The plan JSON without the fields that legitimately differ per call.
inline std::string Comparable(const Mesh& mesh, Plan plan) {
  plan.planning_us = 0;
  plan.states_expanded = 0;
  plan.cache_hit = false;
  return PlanJson(mesh, plan);
}

// Raw stub calls, so that tests see exactly what the server answers.
class RawStub {
 public:
  explicit RawStub(const std::string& address)
      : stub_(v1::Planner::NewStub(grpc::CreateChannel(
            address, grpc::InsecureChannelCredentials()))) {}
  grpc::Status Plan(
      const v1::PlanRequest& r, v1::PlanResponse* out = nullptr,
      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout);
    v1::PlanResponse response;
    return stub_->Plan(&ctx, r, out != nullptr ? out : &response);
  }
  v1::Planner::Stub& stub() { return *stub_; }

 private:
  std::unique_ptr<v1::Planner::Stub> stub_;
};

inline v1::PlanRequest TextRequest(const Mesh& mesh, std::vector<int64_t> shape,
                                   const std::string& src,
                                   const std::string& dst) {
  v1::PlanRequest r;
  *r.mutable_mesh() = proto::MeshToProto(mesh);
  for (int64_t s : shape) r.mutable_tensor()->add_shape(s);
  r.mutable_src()->set_text(src);
  r.mutable_dst()->set_text(dst);
  return r;
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_SERVER_PLANNER_SERVICE_CALLS_H_
