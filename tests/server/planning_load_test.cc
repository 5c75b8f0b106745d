// Heavy searches on a real reshard-planner run on the planning pool, not on
// gRPC's threads. While six heavy Plans (two at the largest budget, four at the
// default, each its own credential) occupy both workers: health answers within
// 1 s every time, a small Plan sent after them finishes before any of them, a
// heavy Plan past the queue is refused naming --planning_queue, and a RunJob's
// heavy plan goes through the same pool. The searches' memory stays within
// --max_search_bytes per worker plus a slack, and falls back after (plain
// builds; sanitizers skip the RSS checks).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/credential_headers.h"
#include "common/issued_job_token.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "reshard/v1/planner.grpc.pb.h"
#include "tests/server/plan_requests.h"
#include "tests/server/server_process.h"

#if defined(__SANITIZE_ADDRESS__)
#define RESHARD_SANITIZED 1
#else
#define RESHARD_SANITIZED 0
#endif

namespace reshard {
namespace {

using testing::HeavyPlan;
using testing::ServerProcess;
using testing::SmallPlan;

constexpr int64_t kSearchBytes = int64_t{512} << 20;
// What the planner holds beside its searches (gRPC, tables, allocator).
constexpr int64_t kSlackBytes = int64_t{256} << 20;

// The planner's resident set now (VmRSS) or at its peak (VmHWM).
int64_t ResidentBytes(pid_t pid, const std::string& key = "VmRSS:") {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      return std::stoll(line.substr(key.size())) * 1024;
    }
  }
  return -1;
}

// Waits (bounded) for the planner's workers to hand their searches'
// memory back after the last reply: its RSS once below `bound`, or at
// the deadline.
int64_t SettledResidentBytes(pid_t pid, int64_t bound) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int64_t rss = ResidentBytes(pid);
  while (rss >= bound && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rss = ResidentBytes(pid);
  }
  return rss;
}

// The planner's admin token, and the job tokens issued under it: each load
// stream is a credential of its own.
constexpr char kAdminToken[] = "planning-load-admin";
std::string Issued(const std::string& job) {
  return JobTokenKey::FromAdminToken(kAdminToken).Issue(job);
}
std::string AdminTokenFile() {
  char path[] = "/tmp/reshard-admin-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  close(fd);
  std::ofstream(path) << kAdminToken << "\n";
  return path;
}

std::unique_ptr<grpc::ClientContext> Context(const std::string& token,
                                             std::chrono::seconds within) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + within);
  if (!token.empty()) context->AddMetadata(kJobTokenHeader, token);
  return context;
}

// Waits (bounded) until the planner grows by 32 MB: its searches run.
void AwaitSearches(pid_t pid, int64_t before) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ResidentBytes(pid) < before + (32 << 20) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// `times` health checks, each answered within 1 s.
void ExpectHealthy(grpc::health::v1::Health::Stub& health, int times) {
  for (int i = 0; i < times; ++i) {
    grpc::health::v1::HealthCheckResponse answer;
    const grpc::Status s =
        health.Check(Context("", std::chrono::seconds(1)).get(),
                     grpc::health::v1::HealthCheckRequest(), &answer);
    EXPECT_TRUE(s.ok()) << "health " << i << ": " << s.error_message();
  }
}

// Two workers, four waiting searches at most, and job tokens issued.
std::vector<std::string> LoadFlags(const std::string& admin_file) {
  return {"--planning_workers=2", "--planning_queue=4",
          absl::StrCat("--max_search_bytes=", kSearchBytes),
          "--admin_token_file=" + admin_file};
}

TEST(PlanningLoadTest, HeavySearchesLeaveHealthAndSmallPlansAlone) {
  const std::string admin_file = AdminTokenFile();
  ServerProcess server(LoadFlags(admin_file));
  std::remove(admin_file.c_str());  // read at start
  ASSERT_GT(server.port(), 0) << server.log();
  auto channel =
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto planner = v1::Planner::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);
  const int64_t before = ResidentBytes(server.pid());

  std::atomic<int> finished{0};
  std::vector<int> heavy_order(6, -1);
  std::vector<grpc::Status> heavy_status(6);
  std::vector<std::thread> heavy;
  for (int i = 0; i < 6; ++i) {
    heavy.emplace_back([&, i] {
      v1::PlanResponse response;
      heavy_status[i] = planner->Plan(
          Context(Issued(absl::StrCat("heavy-", i)), std::chrono::seconds(120))
              .get(),
          HeavyPlan(i < 2 ? 2000000 : 200000), &response);
      heavy_order[i] = finished++;
    });
  }
  AwaitSearches(server.pid(), before);
  // Two run and four wait: a seventh heavy search is refused.
  v1::PlanResponse refused;
  const grpc::Status seventh =
      planner->Plan(Context(Issued("heavy-7"), std::chrono::seconds(10)).get(),
                    HeavyPlan(200000), &refused);
  EXPECT_EQ(seventh.error_code(), grpc::RESOURCE_EXHAUSTED);
  EXPECT_NE(seventh.error_message().find("(--planning_queue)"),
            std::string::npos)
      << seventh.error_message();
  v1::PlanResponse small;
  const grpc::Status small_status =
      planner->Plan(Context(Issued("small"), std::chrono::seconds(10)).get(),
                    SmallPlan(), &small);
  const int small_order = finished++;
  EXPECT_TRUE(small_status.ok()) << small_status.error_message();
  ExpectHealthy(*health, 10);
  for (std::thread& t : heavy) t.join();
  const int64_t peak = ResidentBytes(server.pid(), "VmHWM:");
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(heavy_status[i].ok())
        << i << ": " << heavy_status[i].error_message();
    EXPECT_GT(heavy_order[i], small_order) << "heavy " << i;
  }
  const int64_t after =
      SettledResidentBytes(server.pid(), before + kSlackBytes);
  RecordProperty("rss_before", std::to_string(before));
  RecordProperty("rss_peak", std::to_string(peak));
  RecordProperty("rss_after", std::to_string(after));
  if (!RESHARD_SANITIZED) {
    // Two workers, each search within --max_search_bytes.
    EXPECT_LT(peak, before + 2 * kSearchBytes + kSlackBytes) << peak;
    EXPECT_LT(after, before + kSlackBytes) << after;
  }
}

// RunJob plans through the same pool: its heavy plan does not hold up
// health (the job does not exist, so the call ends NOT_FOUND once planned).
TEST(PlanningLoadTest, ARunJobsHeavyPlanLeavesHealthAlone) {
  ServerProcess server({"--planning_workers=1",
                        absl::StrCat("--max_search_bytes=", kSearchBytes)});
  ASSERT_GT(server.port(), 0) << server.log();
  auto channel =
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto coordinator = v1::Coordinator::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);
  const int64_t before = ResidentBytes(server.pid());
  grpc::Status ran;
  std::thread run([&] {
    v1::RunJobRequest request;
    request.set_job("nobody");
    *request.mutable_request() = HeavyPlan(2000000);
    v1::RunJobResponse response;
    ran = coordinator->RunJob(Context("", std::chrono::seconds(120)).get(),
                              request, &response);
  });
  AwaitSearches(server.pid(), before);
  ExpectHealthy(*health, 5);
  run.join();
  EXPECT_EQ(ran.error_code(), grpc::NOT_FOUND) << ran.error_message();
}

}  // namespace
}  // namespace reshard
