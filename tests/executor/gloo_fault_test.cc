// The executor under faults, on real Gloo ranks in separate processes: a
// peer that never joins, a peer killed mid-collective, ranks given
// different plans. Every surviving rank must return a clear error within
// twice the timeout; nothing hangs, crashes or outlives the test. And the
// compiled-plan API: compile once, run 100 times on caller-owned buffers.
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/judge/data_rule.h"
#include "executor/judge/harness.h"
#include "executor/launch/local_launch.h"
#include "executor/run/plan_runner.h"
#include "executor/stores/file_store.h"
#include "executor/stores/memory_store.h"
#include "executor/stores/rendezvous_dir.h"
#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/search/planner.h"
#include "tests/planner/test_util.h"

namespace reshard {
namespace {

using executor::RankReport;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{1500};

Plan PlanOf(const Mesh& mesh, std::vector<int64_t> shape, const char* src,
            const char* dst) {
  return *MakePlan(mesh, *ParsePlanRequest(mesh, std::move(shape), "f32", src,
                                           dst, PlanOptions()));
}

struct Outcome {
  RankReport report;
  double seconds = 0;  // how long the run took
  double ended = 0;    // when it returned (MonotonicSeconds)
};

// CLOCK_MONOTONIC in seconds: one clock for every process of the machine.
double MonotonicSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs `ranks` processes; `body(rank, provider)` returns the report (or
// never returns, for the faulty ones).
std::vector<Outcome> RunRanks(
    int ranks,
    const std::function<RankReport(int, executor::CommunicatorProvider&)>&
        body) {
  const auto dir = *executor::RendezvousDir::Create("reshard-fault");
  auto child = [&](int rank) {
    executor::GlooOptions options;
    options.timeout = kTimeout;
    executor::GlooCommunicatorProvider provider(
        std::make_shared<executor::FileStore>(dir->path()), "fault", rank,
        options);
    const auto start = std::chrono::steady_clock::now();
    RankReport report = body(rank, provider);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return absl::StrCat(seconds, " ", MonotonicSeconds(), "\n",
                        executor::SerializeReport(report));
  };
  absl::StatusOr<std::vector<executor::ChildResult>> children =
      executor::RunLocalRanks(ranks, child, std::chrono::seconds(60));
  EXPECT_TRUE(children.ok());
  std::vector<Outcome> out(ranks);
  for (int r = 0; children.ok() && r < ranks; ++r) {
    const std::string& text = (*children)[r].output;
    const size_t newline = text.find('\n');
    if (newline == std::string::npos) continue;  // the faulty rank
    std::istringstream times(text.substr(0, newline));
    times >> out[r].seconds >> out[r].ended;
    absl::StatusOr<RankReport> report =
        executor::ParseReport(text.substr(newline + 1));
    EXPECT_TRUE(report.ok()) << report.status();
    if (report.ok()) out[r].report = *report;
  }
  return out;
}

// One plan's rank run (a batch of one).
executor::RankReport RunPlan(const Mesh& mesh, const Plan& plan, int64_t rank,
                             executor::CommunicatorProvider& provider,
                             const executor::HarnessOptions& options) {
  return executor::RunGenerated(mesh, executor::BatchWork::OfPlan(mesh, plan),
                                rank, provider, {}, options);
}

double Limit() { return 2 * std::chrono::duration<double>(kTimeout).count(); }

TEST(GlooFaultTest, PeerThatNeverJoinsIsAnErrorWithinTheTimeout) {
  const Mesh mesh = testing::MakeMesh({3});
  const Plan plan = PlanOf(mesh, {6}, "S(0)", "R");
  const auto outcomes = RunRanks(3, [&](int rank, auto& provider) {
    if (rank == 2) _exit(0);  // never joins
    return RunPlan(mesh, plan, rank, provider, {});
  });
  for (int r = 0; r < 2; ++r) {
    const absl::Status& s = outcomes[r].report.status;
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("connecting group world (ranks [0,1,2])"),
              std::string::npos)
        << s;
    EXPECT_LT(outcomes[r].seconds, Limit());
  }
}

// A store whose waits end, as the Coordinator's do, once the run is
// cancelled (here: once the file `cancel` exists). Setting a key that ends
// with `withheld` (when given) waits for the cancel instead: a rank slowed
// down between publishing its host and its addresses.
class CancellableStore : public executor::KeyValueStore {
 public:
  CancellableStore(std::shared_ptr<executor::KeyValueStore> inner,
                   std::string cancel, std::string withheld)
      : inner_(std::move(inner)),
        cancel_(std::move(cancel)),
        withheld_(std::move(withheld)) {}
  absl::Status Set(const std::string& key, const std::string& value) override {
    if (!withheld_.empty() && absl::EndsWith(key, withheld_)) {
      absl::Status cancelled =
          Get({key + "/never"}, std::chrono::seconds(30)).status();
      if (!cancelled.ok()) return cancelled;
    }
    return inner_->Set(key, value);
  }
  absl::StatusOr<std::vector<std::string>> Get(
      const std::vector<std::string>& keys, milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (std::ifstream(cancel_).good()) {
        return absl::CancelledError("the run was cancelled");
      }
      absl::StatusOr<std::vector<std::string>> values =
          inner_->Get(keys, milliseconds(20));
      if (values.ok() || std::chrono::steady_clock::now() >= deadline) {
        return values;
      }
    }
  }
  absl::Status DeleteByPrefix(const std::string& prefix) override {
    return inner_->DeleteByPrefix(prefix);
  }

 private:
  std::shared_ptr<executor::KeyValueStore> inner_;
  std::string cancel_;
  std::string withheld_;
};

// Cancels the run (writes the file `cancel`) once every rank of the world
// group but rank 1 has published its addresses in the file store at `dir`
// (the key ConnectStore sets, "cancel/0_1_2_3_4_5/RANK"): each of them then
// waits on the store for rank 1's. Waits 10 s at most.
void CancelWhenAllButRankOneWait(const std::string& dir,
                                 const std::string& cancel) {
  std::vector<std::string> published;
  for (int r : {0, 2, 3, 4, 5}) {
    published.push_back(absl::StrCat("cancel/0_1_2_3_4_5/", r));
  }
  executor::FileStore store(dir);
  const absl::Status waited =
      store.Get(published, std::chrono::seconds(10)).status();
  std::ofstream(cancel) << "cancelled: " << waited << "\n";
}

// A cancel while a group connects ends every rank's connect when its store
// wait ends, not a timeout later. Rank 1 publishes its host but never its
// addresses, so rank 0 waits for them; without the barrier after publishing
// (gloo_communicator.cc, ConnectStore) ranks 2-5 would connect their
// pair with rank 0 first, and each that listens on it would wait out the
// whole timeout for rank 0, which gives up at the cancel.
TEST(GlooFaultTest, ACancelWhileConnectingEndsEveryRankWithoutATimeout) {
  constexpr int kRanks = 6;
  const auto dir = *executor::RendezvousDir::Create("reshard-cancel");
  const std::string cancel = dir->path() + "/cancelled";
  auto child = [&](int rank) -> std::string {
    if (rank == 0) {
      std::thread(CancelWhenAllButRankOneWait, dir->path(), cancel).detach();
    }
    executor::GlooOptions options;
    options.timeout = std::chrono::seconds(10);
    executor::GlooCommunicatorProvider provider(
        std::make_shared<CancellableStore>(
            std::make_shared<executor::FileStore>(dir->path()), cancel,
            rank == 1 ? "/1" : ""),
        "cancel", rank, options);
    const auto start = std::chrono::steady_clock::now();
    const absl::Status status =
        provider.Get({0, 1, 2, 3, 4, 5}, "world").status();
    return absl::StrCat(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        " ", status.ToString());
  };
  absl::StatusOr<std::vector<executor::ChildResult>> children =
      executor::RunLocalRanks(kRanks, child, std::chrono::seconds(60));
  ASSERT_TRUE(children.ok()) << children.status();
  for (int r = 0; r < kRanks; ++r) {
    const std::string& text = (*children)[r].output;
    std::istringstream in(text);
    double seconds = -1;
    in >> seconds;
    EXPECT_GE(seconds, 0) << "rank " << r << ": " << text;
    EXPECT_LT(seconds, 5.0) << "rank " << r << ": " << text;
    EXPECT_NE(text.find("the run was cancelled"), std::string::npos)
        << "rank " << r << ": " << text;
  }
}

TEST(GlooFaultTest, PeerKilledMidCollectiveIsAnErrorNamingTheGroup) {
  const Mesh mesh = testing::MakeMesh({2});
  const Plan plan = PlanOf(mesh, {1024, 1024}, "S(0)", "R");  // 4 MiB out
  const auto dir = *executor::RendezvousDir::Create("reshard-kill");
  const std::string kill_file = dir->path() + "/killed_at";
  const auto outcomes = RunRanks(2, [&](int rank, auto& provider) {
    if (rank == 1) {
      // Dies while running the plan again and again, once compiled and 20
      // runs in (so the error hits a data collective, however slow the
      // machine is), after writing down when.
      auto runner = executor::PlanRunner::Compile(mesh, plan, rank, provider);
      if (!runner.ok()) _exit(3);
      std::vector<float> in((*runner)->SourceNumel());
      std::vector<float> out((*runner)->ResultNumel());
      std::atomic<int> runs{0};
      std::thread([&] {
        const auto give_up =
            std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (runs < 20 && std::chrono::steady_clock::now() < give_up) {
          std::this_thread::sleep_for(milliseconds(1));
        }
        std::ofstream(kill_file) << absl::StrFormat("%.9f", MonotonicSeconds());
        raise(SIGKILL);
      }).detach();
      while (true) {
        (void)(*runner)->Run(in.data(), out.data());
        ++runs;
      }
    }
    executor::HarnessOptions many;
    many.iters = 100000;  // still running when the peer dies
    return RunPlan(mesh, plan, rank, provider, many);
  });
  const absl::Status& s = outcomes[0].report.status;
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.code() == absl::StatusCode::kUnavailable ||
              s.code() == absl::StatusCode::kDeadlineExceeded)
      << s;
  EXPECT_NE(s.message().find("steps[0] (all_gather on A): all_gather on "
                             "group A (ranks [0,1])"),
            std::string::npos)
      << s;
  double killed_at = 0;
  std::ifstream(kill_file) >> killed_at;
  ASSERT_GT(killed_at, 0);
  EXPECT_LT(outcomes[0].ended - killed_at, Limit());
}

TEST(GlooFaultTest, RanksWithDifferentPlansRefuseBeforeMovingData) {
  const Mesh mesh = testing::MakeMesh({2, 2});
  const Plan a = PlanOf(mesh, {8, 8}, "S(0),R", "R,R");
  const Plan b = PlanOf(mesh, {8, 8}, "S(1),R", "R,S(0)");
  const auto outcomes = RunRanks(4, [&](int rank, auto& provider) {
    return RunPlan(mesh, rank == 3 ? b : a, rank, provider, {});
  });
  for (int r = 0; r < 4; ++r) {
    const absl::Status& s = outcomes[r].report.status;
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("plan digest mismatch"), std::string::npos);
    EXPECT_NE(s.message().find(r == 3 ? "ranks [0,1,2]" : "ranks [3]"),
              std::string::npos)
        << s;
    EXPECT_LT(outcomes[r].seconds, Limit());
  }
}

TEST(CompiledPlanTest, CompileOnceRunManyTimesOnCallerBuffers) {
  // 4 ranks as threads of this process; each compiles once and runs the
  // plan 100 times on its own buffers, validating every result.
  MeshSpec spec;
  spec.shape = {2, 2};
  spec.dim_names = {"A", "B"};
  spec.flattened = {{"B", "A"}};
  const Mesh mesh = *Mesh::Create(spec);
  PlanOptions options;
  options.flatten_policy = FlattenPolicy::kAny;
  const Plan plan =
      *MakePlan(mesh, *ParsePlanRequest(mesh, {13, 5}, "i32", "S(0)[1]S(0)[0]",
                                        "S(1),P(sum)", options));
  auto store = std::make_shared<executor::MemoryStore>();
  std::vector<int> good_runs(4, 0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 4; ++rank) {
    threads.emplace_back([&, rank] {
      executor::GlooOptions gloo;
      gloo.timeout = std::chrono::seconds(10);
      executor::GlooCommunicatorProvider provider(store, "api", rank, gloo);
      auto runner = executor::PlanRunner::Compile(mesh, plan, rank, provider);
      if (!runner.ok()) return;
      std::vector<int32_t> in((*runner)->SourceNumel());
      std::vector<int32_t> out((*runner)->ResultNumel());
      executor::FillSource(mesh, plan.tensor, plan.src, rank, in.data());
      const std::vector<int32_t> source = in;
      auto reduce = provider.Get(mesh.GroupRanks(rank, {1}), "B");
      if (!reduce.ok()) return;
      for (int i = 0; i < 100; ++i) {
        std::fill(out.begin(), out.end(), -7777);
        if (!(*runner)->Run(in.data(), out.data()).ok()) return;
        // The result is P(sum) on B: summed across B it must be g.
        std::vector<int32_t> reduced = out;
        if (!(*reduce)
                 ->AllReduce(reduced.data(), reduced.size(), DType::kInt32,
                             {ReduceOp::kSum, 1})
                 .ok()) {
          return;
        }
        const bool valid = executor::ValidateResult(mesh, plan.tensor, plan.dst,
                                                    rank, 1, reduced.data())
                               .ok();
        if (valid && in == source) ++good_runs[rank];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(good_runs[rank], 100);
}

}  // namespace
}  // namespace reshard
