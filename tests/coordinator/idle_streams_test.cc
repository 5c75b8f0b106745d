// Idle dispatch streams cost memory, not threads. 10,000 stand-in agents of
// three jobs join a real reshard-planner and open their dispatch streams
// (asynchronously, from one thread here, over 16 connections); once the server
// has answered every stream's initial metadata, the planner's thread count
// stays bounded and its health check answers within 10 ms at the 99th
// percentile. Then every stream is cancelled and the jobs show their ranks
// gone.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/fault_fixture.h"

namespace reshard {
namespace {

using std::chrono::steady_clock;

constexpr int kJobs = 3;
constexpr int kRanksPerJob = 3334;  // 10,002 streams
constexpr int kConnections = 16;
// The planner's threads with every stream open: gRPC's pollers and
// executor, the sync pool's idle threads, the metrics and drain threads.
constexpr int64_t kMaxThreads = 64;

struct OpenStream {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientAsyncReader<v1::Work>> reader;
  grpc::Status status;  // Finish's, written when its tag completes
};

class IdleStreamsTest : public testing::FencingFixture {
 protected:
  // Channels that do not share a connection (a local subchannel pool each).
  void OpenChannels() {
    for (int c = 0; c < kConnections; ++c) {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      stubs_.push_back(v1::Coordinator::NewStub(grpc::CreateCustomChannel(
          server_->address(), grpc::InsecureChannelCredentials(), args)));
    }
  }
  // Joins every rank, keeping each one's session.
  std::vector<v1::AgentId> JoinAll() {
    std::vector<v1::AgentId> agents;
    for (int j = 0; j < kJobs; ++j) {
      for (int r = 0; r < kRanksPerJob; ++r) {
        v1::AgentId id = testing::Agent(absl::StrCat("idle", j), r, 1000 + r);
        const grpc::Status joined = Join(id, kRanksPerJob);
        EXPECT_TRUE(joined.ok()) << joined.error_message();
        if (!joined.ok()) return agents;
        agents.push_back(id);
      }
    }
    return agents;
  }
  // Opens every agent's stream and waits until the server sent each one's
  // initial metadata (it has connected the rank); false at the deadline.
  bool OpenStreams(const std::vector<v1::AgentId>& agents) {
    for (size_t i = 0; i < agents.size(); ++i) {
      auto stream = std::make_unique<OpenStream>();
      v1::DispatchRequest request;
      *request.mutable_agent() = agents[i];
      stream->reader = stubs_[i % kConnections]->PrepareAsyncDispatch(
          &stream->context, request, &cq_);
      stream->reader->StartCall(reinterpret_cast<void*>(2 * i));
      stream->reader->ReadInitialMetadata(reinterpret_cast<void*>(2 * i + 1));
      streams_.push_back(std::move(stream));
    }
    return AwaitTags(2 * agents.size());
  }
  bool AwaitTags(size_t count) {
    const auto deadline =
        std::chrono::system_clock::now() + std::chrono::seconds(120);
    for (size_t done = 0; done < count; ++done) {
      void* tag = nullptr;
      bool ok = false;
      if (cq_.AsyncNext(&tag, &ok, deadline) !=
          grpc::CompletionQueue::GOT_EVENT) {
        return false;
      }
      if (!ok) ADD_FAILURE() << "stream event " << tag << " failed";
    }
    return true;
  }
  // The 99th percentile of 200 health checks, in milliseconds.
  double HealthP99Ms() {
    auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
    std::vector<double> ms;
    for (int i = 0; i < 200; ++i) {
      grpc::ClientContext context;
      grpc::health::v1::HealthCheckResponse response;
      const auto start = steady_clock::now();
      const grpc::Status s = health->Check(
          &context, grpc::health::v1::HealthCheckRequest(), &response);
      ms.push_back(
          std::chrono::duration<double, std::milli>(steady_clock::now() - start)
              .count());
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() * 99 / 100];
  }
  void CancelAll() {
    for (auto& stream : streams_) {
      stream->context.TryCancel();
      stream->reader->Finish(&stream->status, stream.get());
    }
    AwaitTags(streams_.size());
    cq_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  std::vector<std::unique_ptr<v1::Coordinator::Stub>> stubs_;
  grpc::CompletionQueue cq_;
  std::vector<std::unique_ptr<OpenStream>> streams_;
};

TEST_F(IdleStreamsTest, TenThousandIdleStreamsHoldNoThreadEach) {
  OpenChannels();
  const std::vector<v1::AgentId> agents = JoinAll();
  ASSERT_EQ(agents.size(), size_t{kJobs * kRanksPerJob});
  const int64_t threads_before = testing::ThreadCount(server_->pid());
  const bool opened = OpenStreams(agents);
  EXPECT_TRUE(opened) << "not every stream was connected within 120 s";
  const int64_t threads = testing::ThreadCount(server_->pid());
  const double p99 = HealthP99Ms();
  absl::StatusOr<v1::JobInfo> job = GetJob("idle0");
  EXPECT_TRUE(job.ok() && job->state() == "ready") << job.status();
  CancelAll();  // before any assertion ends the test: the streams are ours
  std::printf(
      "%zu streams: planner threads %lld before, %lld open; health "
      "p99 %.2f ms\n",
      streams_.size(), static_cast<long long>(threads_before),
      static_cast<long long>(threads), p99);
  EXPECT_LE(threads, kMaxThreads);
  EXPECT_LT(p99, 10.0);
  EXPECT_TRUE(AwaitJob(
      "idle0", [](const v1::JobInfo& info) { return Connected(info) == 0; }));
}

}  // namespace
}  // namespace reshard
