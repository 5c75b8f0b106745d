// Point-to-point calls on real Gloo ranks (threads meeting in a
// MemoryStore): payloads arrive whole and in call order, collectives on
// the same communicator still agree afterwards, and errors name the peer.
#include <chrono>
#include <cstring>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/stores/memory_store.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using executor::Communicator;

constexpr std::chrono::milliseconds kTimeout{1500};

// Runs `body(rank, communicator)` on `n` threads, each its own rank of one
// group named "A".
void OnRanks(int n, const std::function<void(int, Communicator&)>& body) {
  auto store = std::make_shared<executor::MemoryStore>();
  std::vector<int64_t> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      executor::GlooOptions options;
      options.timeout = kTimeout;
      executor::GlooCommunicatorProvider provider(store, "p2p", r, options);
      absl::StatusOr<Communicator*> comm = provider.Get(ranks, "A");
      ASSERT_TRUE(comm.ok()) << comm.status();
      body(r, **comm);
    });
  }
  for (std::thread& t : threads) t.join();
}

std::vector<int32_t> Payload(int from, int to, int message, int64_t count) {
  std::vector<int32_t> v(count);
  for (int64_t i = 0; i < count; ++i) {
    v[i] = static_cast<int32_t>(from * 1000003 + to * 1009 + message * 7 + i);
  }
  return v;
}

TEST(PointToPointTest, PayloadsArriveWholeInCallOrderBesideCollectives) {
  constexpr int64_t kCount = 300000;  // 1.2 MB: more than a socket buffer
  OnRanks(3, [](int r, Communicator& comm) {
    if (r == 0) {
      for (int to : {1, 2}) {
        for (int m : {0, 1}) {
          const std::vector<int32_t> out = Payload(0, to, m, kCount);
          EXPECT_TRUE(comm.Send(to, out.data(), kCount * 4).ok());
        }
      }
    } else {
      for (int m : {0, 1}) {
        std::vector<int32_t> in(kCount, -1);
        EXPECT_TRUE(comm.Recv(0, in.data(), kCount * 4).ok());
        EXPECT_EQ(in, Payload(0, r, m, kCount)) << "rank " << r << " msg " << m;
      }
    }
    // Only ranks 0 and r exchanged: an all_gather still pairs up.
    const int64_t mine = 100 + r;
    std::vector<int64_t> all(3, 0);
    ASSERT_TRUE(comm.AllGather(&mine, all.data(), 1, DType::kInt64).ok());
    EXPECT_EQ(all, (std::vector<int64_t>{100, 101, 102}));
  });
}

TEST(PointToPointTest, ASelfOrOutOfGroupPeerIsRefusedNamingIt) {
  OnRanks(2, [](int r, Communicator& comm) {
    char byte = 0;
    const absl::Status self = comm.Send(r, &byte, 1);
    EXPECT_EQ(self.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(
        self.message(), absl::StrCat("send to member ", r, " of group A")))
        << self;
    const absl::Status outside = comm.Recv(5, &byte, 1);
    EXPECT_EQ(outside.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(outside.message(),
                                  "receive from member 5 of group A"))
        << outside;
  });
}

TEST(PointToPointTest, AReceiveFromASilentPeerEndsWithinTheTimeoutNamingIt) {
  std::promise<void> done;
  std::shared_future<void> finished = done.get_future().share();
  OnRanks(2, [&](int r, Communicator& comm) {
    if (r == 1) {
      finished.wait();  // connected, alive, and sends nothing
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<char> in(64);
    const absl::Status s = comm.Recv(1, in.data(), 64);
    const auto took = std::chrono::steady_clock::now() - start;
    done.set_value();
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_TRUE(absl::StrContains(s.message(),
                                  "receive from member 1 (rank 1) of group A"))
        << s;
    EXPECT_LT(took, 2 * kTimeout);
  });
}

TEST(PointToPointTest, AnExchangeWithEveryPeerPostedInAnyOrderCompletes) {
  constexpr int kRanks = 4;
  constexpr int64_t kCount = 300000;  // more than a socket buffer each
  OnRanks(kRanks, [](int r, Communicator& comm) {
    std::vector<std::vector<int32_t>> out, in;
    std::vector<executor::PeerMessage> sends, recvs;
    // Sends in descending peer order, receives ascending: any order works.
    for (int k = 0; k < kRanks; ++k) {
      const int to = kRanks - 1 - k;
      if (to == r) continue;
      out.push_back(Payload(r, to, 0, kCount));
      sends.push_back({to, out.back().data(), kCount * 4});
    }
    in.reserve(kRanks);
    for (int from = 0; from < kRanks; ++from) {
      if (from == r) continue;
      in.emplace_back(static_cast<size_t>(kCount), -1);
      recvs.push_back({from, in.back().data(), kCount * 4});
    }
    ASSERT_TRUE(comm.Exchange(sends, recvs).ok());
    for (const executor::PeerMessage& m : recvs) {
      const int32_t* got = static_cast<const int32_t*>(m.data);
      EXPECT_EQ(std::vector<int32_t>(got, got + kCount),
                Payload(m.peer, r, 0, kCount))
          << "rank " << r << " from " << m.peer;
    }
  });
}

TEST(PointToPointTest, AnExchangeWithASilentPeerEndsWithinTheTimeoutNamingIt) {
  std::promise<void> done;
  std::shared_future<void> finished = done.get_future().share();
  OnRanks(2, [&](int r, Communicator& comm) {
    if (r == 1) {
      finished.wait();
      return;
    }
    std::vector<char> in(64), out(64);
    const absl::Status s =
        comm.Exchange({{1, out.data(), 64}}, {{1, in.data(), 64}});
    done.set_value();
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "member 1 (rank 1) of group A"))
        << s;
    const absl::Status self = comm.Exchange({{0, out.data(), 64}}, {});
    EXPECT_EQ(self.code(), absl::StatusCode::kInvalidArgument) << self;
  });
}

}  // namespace
}  // namespace reshard
