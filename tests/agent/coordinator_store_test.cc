// The agents' KeyValueStore over the Coordinator's Store RPCs, against an
// in-process stand-in of them: every call names the agent and the run, a
// get of several keys is one RPC, a get past its timeout (or a Coordinator
// that is not there) is an error naming the keys and the cause, a delete
// removes only its prefix, and two Gloo ranks really connect through it.
#include "agent/coordinator_store.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "executor/backends/gloo/gloo_communicator.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace reshard::agent {
namespace {

using std::chrono::milliseconds;

// StoreSet and StoreGet as the Coordinator answers them: a wait blocks up
// to wait_seconds, then DEADLINE_EXCEEDED naming the missing keys.
class FakeStoreService final : public v1::Coordinator::Service {
 public:
  grpc::Status StoreSet(grpc::ServerContext*,
                        const v1::StoreSetRequest* request,
                        v1::StoreSetResponse*) override {
    absl::MutexLock lock(&mu_);
    runs_.push_back(request->run_id());
    agents_.push_back(request->agent().rank());
    values_[request->key()] = request->value();
    return grpc::Status::OK;
  }
  grpc::Status StoreGet(grpc::ServerContext*,
                        const v1::StoreGetRequest* request,
                        v1::StoreGetResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++gets_;
    runs_.push_back(request->run_id());
    auto all_set = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const std::string& key : request->keys()) {
        if (values_.count(key) == 0) return false;
      }
      return true;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&all_set),
                              absl::Seconds(request->wait_seconds()))) {
      return grpc::Status(
          grpc::DEADLINE_EXCEEDED,
          "missing keys: " + absl::StrJoin(request->keys(), ","));
    }
    for (const std::string& key : request->keys()) {
      response->add_values(values_[key]);
    }
    return grpc::Status::OK;
  }

  grpc::Status StoreDelete(grpc::ServerContext*,
                           const v1::StoreDeleteRequest* request,
                           v1::StoreDeleteResponse* response) override {
    absl::MutexLock lock(&mu_);
    runs_.push_back(request->run_id());
    for (auto it = values_.begin(); it != values_.end();) {
      if (it->first.starts_with(request->prefix())) {
        it = values_.erase(it);
        response->set_deleted(response->deleted() + 1);
      } else {
        ++it;
      }
    }
    return grpc::Status::OK;
  }

  int gets() {
    absl::MutexLock lock(&mu_);
    return gets_;
  }
  std::vector<std::string> runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }
  std::vector<int64_t> agents() {
    absl::MutexLock lock(&mu_);
    return agents_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> runs_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> agents_ ABSL_GUARDED_BY(mu_);
  int gets_ ABSL_GUARDED_BY(mu_) = 0;
};

class CoordinatorStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
    stub_ = v1::Coordinator::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                            grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { server_->Shutdown(); }

  std::shared_ptr<CoordinatorStore> Store(int64_t rank) {
    v1::AgentId agent;
    agent.set_job("job");
    agent.set_rank(rank);
    agent.set_incarnation(77);
    auto store =
        std::make_shared<CoordinatorStore>(stub_, agent, milliseconds(2000));
    store->SetRun("run-1");
    return store;
  }

  FakeStoreService service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<v1::Coordinator::Stub> stub_;
  int port_ = 0;
};

TEST_F(CoordinatorStoreTest, AGetOfSeveralKeysIsOneCallNamingTheRun) {
  std::shared_ptr<CoordinatorStore> store = Store(3);
  ASSERT_TRUE(store->Set("k", std::string("v\0w", 3)).ok());
  ASSERT_TRUE(store->Set("k1", "x").ok());
  absl::StatusOr<std::vector<std::string>> values =
      store->Get({"k", "k1"}, milliseconds(1000));
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<std::string>{std::string("v\0w", 3), "x"}));
  EXPECT_EQ(service_.gets(), 1);
  store->SetRun("run-2");
  ASSERT_TRUE(store->Set("k2", "y").ok());
  EXPECT_EQ(service_.runs(),
            (std::vector<std::string>{"run-1", "run-1", "run-1", "run-2"}));
  EXPECT_EQ(service_.agents(), (std::vector<int64_t>{3, 3, 3}));
}

TEST_F(CoordinatorStoreTest, ADeleteRemovesOnlyItsPrefix) {
  std::shared_ptr<CoordinatorStore> store = Store(1);
  for (const char* key : {"run/a/0", "run/a/1", "run/b/0"}) {
    ASSERT_TRUE(store->Set(key, "v").ok());
  }
  ASSERT_TRUE(store->DeleteByPrefix("run/a/").ok());
  absl::StatusOr<std::vector<std::string>> kept =
      store->Get({"run/b/0"}, milliseconds(1000));
  ASSERT_TRUE(kept.ok()) << kept.status();
  absl::StatusOr<std::vector<std::string>> gone =
      store->Get({"run/a/0"}, milliseconds(100));
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kDeadlineExceeded)
      << gone.status();
}

TEST_F(CoordinatorStoreTest, AGetPastItsTimeoutNamesTheKeys) {
  std::shared_ptr<CoordinatorStore> store = Store(0);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<std::string>> values =
      store->Get({"never", "nor-this"}, milliseconds(200));
  ASSERT_EQ(values.status().code(), absl::StatusCode::kDeadlineExceeded)
      << values.status();
  const std::string what(values.status().message());
  EXPECT_NE(what.find("timed out"), std::string::npos) << what;
  EXPECT_NE(what.find("[never, nor-this]"), std::string::npos) << what;
  EXPECT_NE(what.find("run-1"), std::string::npos) << what;
  EXPECT_NE(what.find("missing keys"), std::string::npos) << what;
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

TEST_F(CoordinatorStoreTest, ACoordinatorThatIsNotThereIsAnErrorNamingTheKey) {
  // A port nothing listens on: bound, then closed.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  auto stub = v1::Coordinator::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(ntohs(addr.sin_port)),
                          grpc::InsecureChannelCredentials()));
  CoordinatorStore store(std::move(stub), v1::AgentId(), milliseconds(1000));
  const absl::Status status = store.Set("my-key", "1");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_NE(status.message().find("\"my-key\""), std::string::npos) << status;
}

// Two Gloo ranks meet through the store and reduce; a rank whose peer never
// comes fails within its timeout with the store's reason.
TEST_F(CoordinatorStoreTest, GlooRanksConnectThroughIt) {
  std::vector<int32_t> data[2] = {{1, 2, 3}, {10, 20, 30}};
  absl::Status status[2];
  auto rank = [&](int r) {
    executor::GlooOptions options;
    options.timeout = milliseconds(5000);
    executor::GlooCommunicatorProvider provider(Store(r), "job/1/run-1", r,
                                                options);
    absl::StatusOr<executor::Communicator*> comm = provider.Get({0, 1}, "A");
    status[r] = comm.ok()
                    ? (*comm)->AllReduce(data[r].data(), 3, DType::kInt32, {})
                    : comm.status();
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(status[r].ok()) << status[r];
    EXPECT_EQ(data[r], (std::vector<int32_t>{11, 22, 33}));
  }
  executor::GlooOptions options;
  options.timeout = milliseconds(300);
  executor::GlooCommunicatorProvider lonely(Store(0), "job/1/run-2", 0,
                                            options);
  absl::StatusOr<executor::Communicator*> comm = lonely.Get({0, 1}, "A");
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded)
      << comm.status();
  EXPECT_NE(comm.status().message().find("coordinator store"),
            std::string::npos)
      << comm.status();
}

}  // namespace
}  // namespace reshard::agent
