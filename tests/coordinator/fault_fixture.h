// What the fault tests (fault_test.cc, fencing_test.cc, bad_input_test.cc)
// share: a reshard-planner on loopback and its Coordinator stub, bounded
// waits on a job's state, RunJob on a thread of its own, and stand-in
// agents that speak the wire protocol themselves (so that a test can send
// what a real agent never would: an old incarnation, an old generation).
#ifndef RESHARD_TESTS_COORDINATOR_FAULT_FIXTURE_H_
#define RESHARD_TESTS_COORDINATOR_FAULT_FIXTURE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/coordinator_calls.h"
#include "tests/server/server_process.h"

namespace reshard::testing {

// The per-collective timeout of the long runs (the 2 s).
inline constexpr double kCollectiveTimeout = 2;

// S(0) -> R of 65,536 floats on a 1-D mesh of `world`, `iters` times.
inline v1::RunJobRequest LongRun(const std::string& job, int world, int iters) {
  return AllGatherRun(job, world, 1 << 16, iters, kCollectiveTimeout);
}

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

inline std::unique_ptr<grpc::ClientContext> Bounded(
    std::chrono::seconds within) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + within);
  return context;
}

// A stand-in agent's identity.
inline v1::AgentId Agent(const std::string& job, int rank,
                         uint64_t incarnation) {
  v1::AgentId id;
  id.set_job(job);
  id.set_rank(rank);
  id.set_incarnation(incarnation);
  return id;
}

// RunJob on a thread of its own, while the test kills, cancels or answers
// for a stand-in. Wait() joins it; the destructor too, so that a test that
// ends early never leaves the thread joinable.
class BackgroundRun {
 public:
  BackgroundRun(v1::Coordinator::Stub& stub, v1::RunJobRequest request,
                std::chrono::milliseconds deadline)
      : thread_([this, &stub, request = std::move(request), deadline] {
          v1::RunJobResponse response;
          status_ = CallRunJob(stub, request, &response, deadline);
          returned_ = std::chrono::steady_clock::now();
        }) {}
  ~BackgroundRun() { Wait(); }

  grpc::Status Wait() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }
  // When RunJob returned (after Wait).
  std::chrono::steady_clock::time_point returned() const { return returned_; }

 private:
  grpc::Status status_;
  std::chrono::steady_clock::time_point returned_;
  std::thread thread_;  // last: starts once the rest is built
};

// A stand-in's dispatch stream; cancelled and finished on destruction.
struct DispatchStream {
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::ClientReader<v1::Work>> reader;

  ~DispatchStream() {
    context->TryCancel();
    reader->Finish();
  }
};

class FaultFixture : public ::testing::Test {
 protected:
  void SetUp() override { StartServer({}); }

  void StartServer(std::vector<std::string> flags) {
    server_ = std::make_unique<ServerProcess>(std::move(flags));
    ASSERT_NE(server_->port(), 0) << server_->log();
    Connect();
  }

  void Connect() {
    stub_ = v1::Coordinator::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  grpc::Status RunJob(const v1::RunJobRequest& request,
                      v1::RunJobResponse* response,
                      std::chrono::milliseconds deadline) {
    return CallRunJob(*stub_, request, response, deadline);
  }

  absl::StatusOr<v1::JobInfo> GetJob(const std::string& job) {
    return CallGetJob(*stub_, job);
  }

  grpc::Status CancelJob(const std::string& job, std::string* run_id) {
    v1::CancelJobRequest request;
    request.set_job(job);
    v1::CancelJobResponse response;
    const grpc::Status status = stub_->CancelJob(
        Bounded(std::chrono::seconds(5)).get(), request, &response);
    *run_id = response.run_id();
    return status;
  }

  // Polls GetJob every 20 ms until `job` exists and `done` holds for it;
  // false after `within`.
  bool AwaitJob(const std::string& job,
                const std::function<bool(const v1::JobInfo&)>& done,
                std::chrono::seconds within = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      absl::StatusOr<v1::JobInfo> info = GetJob(job);
      if (info.ok() && done(*info)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  static int Connected(const v1::JobInfo& info) {
    int connected = 0;
    for (const v1::AgentInfo& agent : info.agents()) {
      connected += agent.connected();
    }
    return connected;
  }
  bool AwaitConnected(const std::string& job, int agents) {
    return AwaitJob(job, [agents](const v1::JobInfo& info) {
      return Connected(info) == agents;
    });
  }
  // Until the job's run in flight moves data on every rank
  // (AgentProcesses::ExecutingOnEveryRank). Polled every 20 ms for up to
  // 10 s.
  bool AwaitExecuting(const AgentProcesses& agents, const std::string& job) {
    return AwaitJob(
        job,
        [&agents](const v1::JobInfo& info) {
          return info.state() == "running" &&
                 agents.ExecutingOnEveryRank(info.current_run());
        },
        std::chrono::seconds(10));
  }

  // A short run that must validate.
  void ExpectValidatedRun(const std::string& job, int world) {
    v1::RunJobResponse response;
    const grpc::Status status =
        RunJob(LongRun(job, world, 2), &response, std::chrono::seconds(60));
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(response.validated()) << response.validation_error();
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// The Coordinator's agent-facing RPCs, sent for stand-in agents.
class FencingFixture : public FaultFixture {
 protected:
  // Joins as `id`, which then holds the session the Coordinator gave.
  grpc::Status Join(v1::AgentId& id, int world = 2) {
    v1::JoinResponse response;
    const grpc::Status status = JoinAs(id, world, &response);
    if (status.ok()) id.set_session(response.session());
    return status;
  }
  // A join the test expects refused (or whose session it does not need).
  grpc::Status Join(const v1::AgentId& id, int world = 2) {
    v1::JoinResponse response;
    return JoinAs(id, world, &response);
  }
  grpc::Status JoinAs(const v1::AgentId& id, int world,
                      v1::JoinResponse* response) {
    v1::JoinRequest request;
    *request.mutable_agent() = id;
    request.set_world_size(world);
    request.set_version(kReshardVersion);
    request.set_protocol(kCoordinatorProtocol);
    return stub_->Join(Bounded(std::chrono::seconds(5)).get(), request,
                       response);
  }
  grpc::Status Report(const v1::AgentId& id, int64_t generation,
                      const std::string& run_id, int code = 0,
                      const std::string& error = "") {
    v1::ReportRequest request;
    *request.mutable_agent() = id;
    request.set_generation(generation);
    request.set_run_id(run_id);
    request.mutable_report()->set_code(code);
    request.mutable_report()->set_error(error);
    v1::ReportResponse response;
    return stub_->Report(Bounded(std::chrono::seconds(5)).get(), request,
                         &response);
  }
  grpc::Status StoreSet(const v1::AgentId& id, const std::string& run_id,
                        const std::string& key = "k",
                        const std::string& value = "v") {
    v1::StoreSetRequest request;
    *request.mutable_agent() = id;
    request.set_run_id(run_id);
    request.set_key(key);
    request.set_value(value);
    v1::StoreSetResponse response;
    return stub_->StoreSet(Bounded(std::chrono::seconds(5)).get(), request,
                           &response);
  }
  grpc::Status StoreGet(const v1::AgentId& id, const std::string& run_id,
                        const std::vector<std::string>& keys = {"k"},
                        std::vector<std::string>* values = nullptr) {
    v1::StoreGetRequest request;
    *request.mutable_agent() = id;
    request.set_run_id(run_id);
    for (const std::string& key : keys) request.add_keys(key);
    v1::StoreGetResponse response;
    grpc::Status status = stub_->StoreGet(
        Bounded(std::chrono::seconds(5)).get(), request, &response);
    if (values != nullptr) {
      values->assign(response.values().begin(), response.values().end());
    }
    return status;
  }
  grpc::Status Leave(const v1::AgentId& id) {
    v1::LeaveRequest request;
    *request.mutable_agent() = id;
    v1::LeaveResponse response;
    return stub_->Leave(Bounded(std::chrono::seconds(5)).get(), request,
                        &response);
  }
  // Opens `id`'s dispatch stream (open for up to 60 s).
  std::unique_ptr<DispatchStream> Dispatch(const v1::AgentId& id) {
    auto stream = std::make_unique<DispatchStream>();
    stream->context = Bounded(std::chrono::seconds(60));
    v1::DispatchRequest request;
    *request.mutable_agent() = id;
    stream->reader = stub_->Dispatch(stream->context.get(), request);
    return stream;
  }
  // A dispatch stream that ends at once (a refusal): its status.
  grpc::Status RefusedDispatch(const v1::AgentId& id) {
    std::unique_ptr<grpc::ClientContext> context =
        Bounded(std::chrono::seconds(5));
    v1::DispatchRequest request;
    *request.mutable_agent() = id;
    auto stream = stub_->Dispatch(context.get(), request);
    v1::Work work;
    while (stream->Read(&work)) {
    }
    return stream->Finish();
  }
};

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_COORDINATOR_FAULT_FIXTURE_H_
