// Waiting StoreGets hold no thread and are capped. Two jobs of issued
// tokens on a real reshard-planner each hold a run in flight; 3,000
// StoreGets wait there for a key nobody has set, sent asynchronously from
// one thread here. Past --max_store_waiters_per_credential for one job's
// token, and past --max_store_waiters in all, the excess is refused at once
// with RESOURCE_EXHAUSTED naming the flag; the planner's thread count stays
// bounded while the rest wait; once the key is set every waiting call is
// answered with its value. A wait ends at its deadline naming the missing
// key, and a caller that goes away gives its slot back.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/held_runs.h"

namespace reshard {
namespace {

using testing::HeldRun;
using testing::IssuedToken;
using testing::WithToken;

constexpr int kPerCredential = 2000;
constexpr int kTotal = 2500;
// Sent per job: the first job past its own cap, the second past the total.
constexpr int kFirst = 2200;
constexpr int kSecond = 800;
// The planner's threads with every wait held: gRPC's pollers and
// executor, the sync pool's threads (two RunJob calls among them), the
// metrics and drain threads. One per wait would be 2,500.
constexpr int64_t kMaxThreads = 64;

struct PendingGet {
  std::unique_ptr<grpc::ClientContext> context;
  v1::StoreGetResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::StoreGetResponse>> reader;
};

v1::StoreGetRequest GetOf(const HeldRun& held, const std::string& key,
                          double wait_seconds) {
  v1::StoreGetRequest request;
  *request.mutable_agent() = held.id;
  request.set_run_id(held.run_id);
  request.add_keys(key);
  request.set_wait_seconds(wait_seconds);
  return request;
}

class StoreWaitersTest : public testing::HeldRunsFixture {
 protected:
  void SetUp() override { HeldRunsFixture::SetUp(); }

  void Start(int total, int per_credential) {
    StartIssuing(
        {absl::StrCat("--max_store_waiters=", total),
         absl::StrCat("--max_store_waiters_per_credential=", per_credential)});
  }

  // Sends `count` StoreGets of `held`'s run for key "k".
  void Send(const HeldRun& held, int count) {
    for (int i = 0; i < count; ++i) {
      auto get = std::make_unique<PendingGet>();
      get->context = WithToken(held.token);
      get->reader = stub_->PrepareAsyncStoreGet(get->context.get(),
                                                GetOf(held, "k", 50), &cq_);
      get->reader->StartCall();
      get->reader->Finish(&get->response, &get->status, get.get());
      gets_.push_back(std::move(get));
    }
  }

  // The next `count` calls to end (fewer at the 60 s deadline).
  std::vector<PendingGet*> Ended(size_t count) {
    std::vector<PendingGet*> ended;
    const auto deadline =
        std::chrono::system_clock::now() + std::chrono::seconds(60);
    while (ended.size() < count) {
      void* tag = nullptr;
      bool ok = false;
      if (cq_.AsyncNext(&tag, &ok, deadline) !=
          grpc::CompletionQueue::GOT_EVENT) {
        break;
      }
      ended.push_back(static_cast<PendingGet*>(tag));
    }
    return ended;
  }

  // How many of `ended` were refused RESOURCE_EXHAUSTED naming `flag`.
  static int RefusedNaming(const std::vector<PendingGet*>& ended,
                           const std::string& flag) {
    int refused = 0;
    for (const PendingGet* get : ended) {
      const bool named =
          get->status.error_code() == grpc::RESOURCE_EXHAUSTED &&
          get->status.error_message().find(flag) != std::string::npos;
      EXPECT_TRUE(named) << get->status.error_code() << ": "
                         << get->status.error_message();
      refused += named;
    }
    return refused;
  }

  void Set(const HeldRun& held) {
    v1::StoreSetRequest set;
    *set.mutable_agent() = held.id;
    set.set_run_id(held.run_id);
    set.set_key("k");
    set.set_value(held.id.job());
    v1::StoreSetResponse response;
    const grpc::Status s =
        stub_->StoreSet(WithToken(held.token).get(), set, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }

  void TearDown() override {
    for (auto& get : gets_) get->context->TryCancel();
    cq_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) {
    }
    HeldRunsFixture::TearDown();
  }

  grpc::CompletionQueue cq_;
  std::vector<std::unique_ptr<PendingGet>> gets_;
};

TEST_F(StoreWaitersTest, ThreeThousandWaitsHoldNoThreadAndTheExcessIsRefused) {
  Start(kTotal, kPerCredential);
  std::vector<HeldRun> held(2);
  for (int j = 0; j < 2; ++j) {
    Hold(j, IssuedToken(j), held[j]);
    ASSERT_FALSE(HasFatalFailure()) << "job " << j;
  }
  const int64_t threads_before = testing::ThreadCount(server_->pid());
  // The first job's refusals come only once it holds its whole share.
  Send(held[0], kFirst);
  EXPECT_EQ(RefusedNaming(Ended(kFirst - kPerCredential),
                          "(--max_store_waiters_per_credential)"),
            kFirst - kPerCredential);
  Send(held[1], kSecond);
  const int by_total = kSecond - (kTotal - kPerCredential);
  EXPECT_EQ(RefusedNaming(Ended(by_total), "(--max_store_waiters)"), by_total);
  const int64_t threads = testing::ThreadCount(server_->pid());
  std::printf(
      "%d StoreGets, %d waiting: planner threads %lld before, %lld "
      "waiting\n",
      kFirst + kSecond, kTotal, static_cast<long long>(threads_before),
      static_cast<long long>(threads));
  EXPECT_LE(threads, kMaxThreads);

  Set(held[0]);
  Set(held[1]);
  const std::vector<PendingGet*> answered = Ended(kTotal);
  EXPECT_EQ(answered.size(), size_t{kTotal});
  int with_value = 0;
  for (const PendingGet* get : answered) {
    EXPECT_TRUE(get->status.ok()) << get->status.error_message();
    with_value += get->response.values_size() == 1 &&
                  get->response.values(0).starts_with("held");
  }
  EXPECT_EQ(with_value, kTotal);
  Release(held);
}

TEST_F(StoreWaitersTest, AWaitEndsAtItsDeadlineOrWhenItsCallerGoes) {
  Start(kTotal, 1);
  std::vector<HeldRun> held(1);
  Hold(0, IssuedToken(0), held[0]);
  ASSERT_FALSE(HasFatalFailure());
  v1::StoreGetResponse response;
  grpc::Status expired = stub_->StoreGet(
      WithToken(held[0].token).get(), GetOf(held[0], "never", 0.2), &response);
  EXPECT_EQ(expired.error_code(), grpc::DEADLINE_EXCEEDED);
  EXPECT_EQ(expired.error_message(),
            "1 of 1 rendezvous keys still missing at the deadline: never");
  // One wait takes the token's only slot: a zero wait is then refused.
  auto refused_now = [&] {
    v1::StoreGetResponse ignored;
    return stub_
        ->StoreGet(WithToken(held[0].token).get(), GetOf(held[0], "k", 0),
                   &ignored)
        .error_code();
  };
  auto await = [](const std::function<bool()>& done) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
    }
    return true;
  };
  Send(held[0], 1);
  EXPECT_TRUE(await([&] {
    if (refused_now() == grpc::RESOURCE_EXHAUSTED) return true;
    // A zero wait admitted while the wait was on its way held the slot,
    // and the wait was refused: send it again.
    void* tag = nullptr;
    bool ok = false;
    if (cq_.AsyncNext(&tag, &ok, std::chrono::system_clock::now()) ==
        grpc::CompletionQueue::GOT_EVENT) {
      Send(held[0], 1);
    }
    return false;
  }));
  gets_.back()->context->TryCancel();
  const std::vector<PendingGet*> cancelled = Ended(1);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0]->status.error_code(), grpc::CANCELLED)
      << cancelled[0]->status.error_message();
  // Its slot is back: the zero wait is admitted and expires.
  EXPECT_TRUE(await([&] { return refused_now() == grpc::DEADLINE_EXCEEDED; }));
  Release(held);
}

}  // namespace
}  // namespace reshard
