// The Coordinator's own health name: reshard.v1.Coordinator is SERVING while
// the Coordinator takes new work and NOT_SERVING while it would refuse it
// (here: at --max_jobs=1), and SERVING again once room is made; the server's
// overall health stays SERVING throughout, since the Planner and the jobs it
// holds are still served.
#include <chrono>
#include <string>
#include <thread>

#include "common/version.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/coordinator/fault_fixture.h"

namespace reshard {
namespace {

using Health = grpc::health::v1::HealthCheckResponse;

class CoordinatorHealthTest : public testing::FencingFixture {
 protected:
  void SetUp() override {
    StartServer({"--max_jobs=1"});
    health_ = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }
  Health::ServingStatus Status(const std::string& service) {
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    Health response;
    const grpc::Status s = health_->Check(
        testing::Bounded(std::chrono::seconds(5)).get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.status();
  }
  // Polls every 50 ms, for up to 10 s (the server looks once a second).
  bool Await(Health::ServingStatus want) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Status("reshard.v1.Coordinator") == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

TEST_F(CoordinatorHealthTest, NotServingWhileItWouldRefuseNewJobs) {
  EXPECT_TRUE(Await(Health::SERVING));
  v1::AgentId only = testing::Agent("only", 0, 5);
  ASSERT_TRUE(Join(only, 1).ok());
  EXPECT_TRUE(Await(Health::NOT_SERVING));
  EXPECT_EQ(Status(""), Health::SERVING);
  EXPECT_EQ(Status("reshard.v1.Planner"), Health::SERVING);
  ASSERT_TRUE(Leave(only).ok());  // its last agent left: the job is gone
  EXPECT_TRUE(Await(Health::SERVING));
}

}  // namespace
}  // namespace reshard
