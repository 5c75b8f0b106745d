// Real reshard-planner processes under load on loopback: a deadline stops
// a search, concurrent mixed requests agree with offline plans, and a client
// of three replicas survives one's SIGKILL (SIGTERM's drain is in
// planner_metrics_test: it waits on the server's in-flight gauge). Every wait
// is bounded and waits on what the callers have seen, never on a fixed time.
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/search/planner.h"
#include "proto/convert.h"
#include "reshard/client.h"
#include "tests/planner/random_cases.h"
#include "tests/planner/test_util.h"
#include "tests/server/planner_service_calls.h"
#include "tests/server/server_process.h"

namespace reshard::server {
namespace {

using testing::Comparable;
using testing::Connect;
using testing::MakeMesh;
using testing::RawStub;
using testing::Request;
using testing::ServerProcess;
using testing::TextRequest;

// Polls `done` every 10 ms for up to `within`: whether it came true.
bool WaitFor(const std::function<bool()>& done,
             std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A search-heavy request (a few hundred ms): 6-D mesh, 4-D tensor, any
// flatten policy.
v1::PlanRequest HeavyRequest() {
  const Mesh mesh = MakeMesh({2, 2, 2, 2, 2, 2});
  v1::PlanRequest r =
      TextRequest(mesh, {1024, 512, 256, 64}, "S(0),P(sum),R,S(3),P(sum),S(1)",
                  "S(1),R,S(2),R,S(0),R");
  r.mutable_options()->set_flatten_policy(v1::FLATTEN_POLICY_ANY);
  r.mutable_options()->set_search_budget(2000000);  // the server's limit
  return r;
}

TEST(PlannerServiceTest, DeadlineStopsTheSearch) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  RawStub raw(server.address());
  const grpc::Status s =
      raw.Plan(HeavyRequest(), nullptr, std::chrono::milliseconds(1));
  EXPECT_EQ(s.error_code(), grpc::DEADLINE_EXCEEDED) << s.error_message();
  auto client = Connect(server.address());
  EXPECT_TRUE(client->Health().ok());
  const Mesh mesh = MakeMesh({2});
  EXPECT_TRUE(client->PlanInline(mesh, Request(mesh, {4}, "S(0)", "R")).ok());
  EXPECT_EQ(server.Stop(), 0);
}

TEST(PlannerServiceTest, ConcurrentMixedRequestsAgree) {
  ServerProcess server;
  ASSERT_NE(server.port(), 0) << server.log();
  auto client = Connect(server.address());
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "C"}});
  const std::string id = *client->RegisterMesh(mesh);
  const std::vector<PlanRequest> requests = {
      Request(mesh, {16, 16}, "P(sum),R,P(sum)", "R,R,R"),
      Request(mesh, {9, 7}, "S(0),S(1),R", "S(1),R,S(0)"),
      Request(mesh, {5}, "P(avg),R,S(0)", "R,S(0),P(avg)"),
      Request(mesh, {8, 8, 8}, "S(0),S(0),S(0)", "S(1),S(1),S(1)",
              PlanOptions{PlannerKind::kTorchGreedy}),
  };
  std::vector<std::string> expected;
  for (const PlanRequest& r : requests) {
    expected.push_back(Comparable(mesh, *MakePlan(mesh, r)));
  }
  std::atomic<int> errors{0}, done{0};
  std::vector<std::thread> threads;
  const int per_thread = testing::ScaledCases(2000);
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        const int k = (t + i) % 6;
        if (k < 4) {
          absl::StatusOr<Plan> plan =
              k % 2 ? client->PlanRegistered(id, requests[k])
                    : client->PlanInline(mesh, requests[k]);
          if (!plan.ok() || Comparable(mesh, *plan) != expected[k]) ++errors;
        } else if (k == 4) {
          absl::StatusOr<std::vector<ResolvedGroup>> g =
              client->ResolveGroups(id, t % 8);
          if (!g.ok() || g->size() != 4) ++errors;
        } else if (!client->Health().ok()) {
          ++errors;
        }
        ++done;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(done.load(), 16 * per_thread);
}

// Four callers planning `request` through one client until stopped, two
// inline and two by the registered id, each counting its calls; a call
// that fails or plans otherwise than `expected` is a failure.
class PlanLoad {
 public:
  PlanLoad(Client& client, std::string id, Mesh mesh, PlanRequest request,
           std::string expected)
      : client_(client),
        id_(std::move(id)),
        mesh_(std::move(mesh)),
        request_(std::move(request)),
        expected_(std::move(expected)) {
    for (int t = 0; t < kCallers; ++t) {
      threads_.emplace_back([this, t] { Call(t); });
    }
  }
  ~PlanLoad() { Stop(); }

  // Until every caller has made `more` calls past its count now.
  bool AwaitEveryCallerMakes(int more, std::chrono::seconds within) {
    std::array<int, kCallers> target;
    for (int t = 0; t < kCallers; ++t) target[t] = calls_[t] + more;
    return WaitFor(
        [&] {
          for (int t = 0; t < kCallers; ++t) {
            if (calls_[t] < target[t]) return false;
          }
          return true;
        },
        within);
  }
  void Stop() {
    stop_ = true;
    for (std::thread& th : threads_) {
      if (th.joinable()) th.join();
    }
  }
  int calls() const {
    int total = 0;
    for (const std::atomic<int>& c : calls_) total += c;
    return total;
  }
  int failures() const { return failures_; }

 private:
  static constexpr int kCallers = 4;

  void Call(int t) {
    while (!stop_) {
      absl::StatusOr<Plan> plan = t % 2 ? client_.PlanRegistered(id_, request_)
                                        : client_.PlanInline(mesh_, request_);
      if (!plan.ok() || Comparable(mesh_, *plan) != expected_) {
        ++failures_;
        ADD_FAILURE() << plan.status();
      }
      ++calls_[t];
    }
  }

  Client& client_;
  const std::string id_;
  const Mesh mesh_;
  const PlanRequest request_;
  const std::string expected_;
  std::array<std::atomic<int>, kCallers> calls_{};
  std::atomic<int> failures_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;  // last: start once the rest is built
};

// Load spreads over the survivors of `target`: a round-robin channel
// reaches both.
void ExpectRoundRobinReachesTwoReplicas(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName("round_robin");
  auto channel = grpc::CreateCustomChannel(
      "ipv4:" + target, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::Planner::NewStub(channel);
  std::set<std::string> peers;
  for (int i = 0; i < 40; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(5));
    v1::ListMeshesResponse out;
    if (stub->ListMeshes(&ctx, v1::ListMeshesRequest(), &out).ok()) {
      peers.insert(ctx.peer());
    }
  }
  EXPECT_EQ(peers.size(), 2u);
}

TEST(PlannerServiceTest, ScaleOutSurvivesAKilledReplica) {
  ServerProcess a, b, c;
  ASSERT_TRUE(a.port() && b.port() && c.port());
  const std::string target =
      a.address() + "," + b.address() + "," + c.address();
  auto client = Connect(target, 8);
  const Mesh mesh = MakeMesh({2, 2, 2}, {{"A", "B"}});
  const std::string id = *client->RegisterMesh(mesh);  // on one replica only
  const PlanRequest request =
      Request(mesh, {32, 16}, "S(0),P(sum),S(1)", "R,S(0),S(1)");
  PlanLoad load(*client, id, mesh, request,
                Comparable(mesh, *MakePlan(mesh, request)));
  // Each caller goes round the three replicas (round robin) three times,
  // the mesh registered again where it is missing; then b dies.
  EXPECT_TRUE(load.AwaitEveryCallerMakes(9, std::chrono::seconds(30)));
  b.Kill();
  const int before = load.calls();
  // Each caller goes on, ten times round what was three replicas.
  EXPECT_TRUE(load.AwaitEveryCallerMakes(30, std::chrono::seconds(30)));
  load.Stop();
  EXPECT_EQ(load.failures(), 0);
  EXPECT_GT(load.calls(), before);  // work continued after the kill
  ExpectRoundRobinReachesTwoReplicas(target);
  EXPECT_EQ(a.Stop(), 0);
  EXPECT_EQ(c.Stop(), 0);
}

}  // namespace
}  // namespace reshard::server
