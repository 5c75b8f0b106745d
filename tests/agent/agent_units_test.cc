// The agent's pure parts: its flags (every bad value named, exit-2 class),
// the decision to keep or reopen communicators between runs, and what a
// run must pass before any communicator opens (the plan digest above all).
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/agent_config.h"
#include "agent/backoff.h"
#include "agent/communicator_cache.h"
#include "agent/dispatch_inbox.h"
#include "agent/memory_capacity.h"
#include "agent/run_work.h"
#include "gtest/gtest.h"
#include "planner/cost/plan_memory.h"
#include "proto/convert.h"
#include "run_values/batch_work.h"
#include "tests/planner/test_util.h"

namespace reshard::agent {
namespace {

AgentFlagValues GoodFlags() {
  AgentFlagValues flags;
  flags.server = "127.0.0.1:50051";
  flags.job = "job-7";
  flags.rank = "3";
  flags.world_size = "8";
  return flags;
}

TEST(AgentFlagsTest, GoodFlagsParse) {
  AgentFlagValues flags = GoodFlags();
  flags.timeout_seconds = "2.5";
  flags.listen_address = "10.0.0.7";
  absl::StatusOr<AgentConfig> config = ParseAgentFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "127.0.0.1:50051");
  EXPECT_EQ(config->job, "job-7");
  EXPECT_EQ(config->rank, 3);
  EXPECT_EQ(config->world_size, 8);
  EXPECT_EQ(config->device, -1);
  EXPECT_EQ(config->listen_address, "10.0.0.7");
  EXPECT_DOUBLE_EQ(config->timeout_seconds, 2.5);
  EXPECT_DOUBLE_EQ(config->reconnect_seconds, 60);
  flags.reconnect_seconds = "0";
  EXPECT_DOUBLE_EQ(ParseAgentFlags(flags)->reconnect_seconds, 0);
}

// The job token: --job_token_file's (trailing newline dropped), else
// $RESHARD_JOB_TOKEN, else none; an unreadable file is refused naming it.
TEST(AgentFlagsTest, TheJobTokenComesFromItsFileElseTheEnvironment) {
  AgentFlagValues flags = GoodFlags();
  unsetenv("RESHARD_JOB_TOKEN");
  EXPECT_EQ(ParseAgentFlags(flags)->job_token, "");
  setenv("RESHARD_JOB_TOKEN", "env-token", 1);
  EXPECT_EQ(ParseAgentFlags(flags)->job_token, "env-token");
  char path[] = "/tmp/reshard-agent-token-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "file-token\n";
  flags.job_token_file = path;
  EXPECT_EQ(ParseAgentFlags(flags)->job_token, "file-token");
  unlink(path);
  const absl::Status gone = ParseAgentFlags(flags).status();
  EXPECT_EQ(gone.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gone.message(), absl::StrCat("--job_token_file=", path,
                                         ": cannot read it (No such file or "
                                         "directory)"));
  unsetenv("RESHARD_JOB_TOKEN");
}

// auto stays for the agent to resolve when it starts; units are binary.
TEST(AgentFlagsTest, MaxRunBytesTakesAutoZeroOrAByteCount) {
  AgentFlagValues flags = GoodFlags();
  EXPECT_EQ(ParseAgentFlags(flags)->max_run_bytes, kAutoRunBytes);
  for (const auto& [text, bytes] : std::vector<std::pair<std::string, int64_t>>{
           {"0", 0},
           {"1000", 1000},
           {"3KiB", 3072},
           {"2MiB", int64_t{2} << 20},
           {"16GiB", int64_t{16} << 30},
           {"1TiB", int64_t{1} << 40}}) {
    flags.max_run_bytes = text;
    absl::StatusOr<AgentConfig> config = ParseAgentFlags(flags);
    ASSERT_TRUE(config.ok()) << text << ": " << config.status();
    EXPECT_EQ(config->max_run_bytes, bytes) << text;
  }
  EXPECT_EQ(AutoRunBytes(int64_t{24} << 30, 1), int64_t{18} << 30);
  // Four agents on one host share its memory.
  EXPECT_EQ(AutoRunBytes(int64_t{24} << 30, 4), int64_t{18} << 28);
}

// --agents_per_host, else torchrun's $LOCAL_WORLD_SIZE, else 1; out of
// range is refused naming the flag.
TEST(AgentConfigTest, AgentsPerHostComeFromTheFlagOrTheEnvironment) {
  AgentFlagValues flags = GoodFlags();
  unsetenv("LOCAL_WORLD_SIZE");
  absl::StatusOr<AgentConfig> config = ParseAgentFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->agents_per_host, 1);
  EXPECT_EQ(config->agents_per_host_source, "the default");
  setenv("LOCAL_WORLD_SIZE", "4", 1);
  config = ParseAgentFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->agents_per_host, 4);
  EXPECT_EQ(config->agents_per_host_source, "$LOCAL_WORLD_SIZE");
  flags.agents_per_host = 2;
  config = ParseAgentFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->agents_per_host, 2);
  unsetenv("LOCAL_WORLD_SIZE");
  flags.agents_per_host = -1;
  EXPECT_EQ(ParseAgentFlags(flags).status().message(),
            "--agents_per_host: -1 is not in [0, 65536] (0: "
            "$LOCAL_WORLD_SIZE, else 1)");
}

// The auto bound's capacity: a cgroup limit below the physical memory wins;
// "max" or no file leaves the physical memory.
TEST(HostMemoryTest, ACgroupLimitCapsThePhysicalMemory) {
  const std::string file = ::testing::TempDir() + "/memory.max";
  const int64_t physical = HostMemoryBytes(file + ".missing");
  EXPECT_GT(physical, int64_t{1} << 26);
  std::ofstream(file) << "1048576\n";
  EXPECT_EQ(HostMemoryBytes(file), 1048576);
  std::ofstream(file) << "max\n";
  EXPECT_EQ(HostMemoryBytes(file), physical);
  std::ofstream(file) << (physical + 4096) << "\n";
  EXPECT_EQ(HostMemoryBytes(file), physical);
}

TEST(AgentFlagsTest, EveryBadValueNamesItsFlag) {
  struct Case {
    void (*edit)(AgentFlagValues&);
    const char* message;
  };
  const Case cases[] = {
      {[](AgentFlagValues& f) { f.server = ""; }, "--server: required"},
      {[](AgentFlagValues& f) { f.server = "localhost"; }, "--server: "},
      {[](AgentFlagValues& f) { f.server = "h:0"; }, "--server: "},
      {[](AgentFlagValues& f) { f.server = "h:x"; }, "--server: "},
      {[](AgentFlagValues& f) { f.job = ""; }, "--job: required"},
      {[](AgentFlagValues& f) { f.job = "a b"; }, "--job: "},
      {[](AgentFlagValues& f) { f.job = std::string(129, 'j'); }, "--job: "},
      {[](AgentFlagValues& f) { f.rank = ""; }, "--rank: required"},
      {[](AgentFlagValues& f) { f.rank = "x"; }, "--rank: \"x\" is not"},
      {[](AgentFlagValues& f) { f.rank = "8"; }, "--rank: 8 is not in [0, "},
      {[](AgentFlagValues& f) { f.rank = "-1"; }, "--rank: -1 is not in"},
      {[](AgentFlagValues& f) { f.world_size = ""; }, "--world_size: required"},
      {[](AgentFlagValues& f) { f.world_size = "0"; }, "--world_size: must"},
      {[](AgentFlagValues& f) { f.backend = "mpi"; }, "--backend: unknown"},
      {[](AgentFlagValues& f) { f.device = "gpu0"; }, "--device: "},
      {[](AgentFlagValues& f) { f.device = "-2"; }, "--device: "},
      {[](AgentFlagValues& f) { f.listen_address = ""; }, "--listen_address"},
      {[](AgentFlagValues& f) { f.timeout_seconds = "0"; },
       "--timeout_seconds"},
      {[](AgentFlagValues& f) { f.timeout_seconds = "nan"; },
       "--timeout_seconds"},
      {[](AgentFlagValues& f) { f.timeout_seconds = "1e9"; },
       "--timeout_seconds"},
      {[](AgentFlagValues& f) { f.reconnect_seconds = "-1"; },
       "--reconnect_seconds: \"-1\" is not"},
      {[](AgentFlagValues& f) { f.reconnect_seconds = "soon"; },
       "--reconnect_seconds: "},
      {[](AgentFlagValues& f) { f.reconnect_seconds = "1e9"; },
       "--reconnect_seconds: "},
      {[](AgentFlagValues& f) { f.max_run_bytes = "-1"; },
       "--max_run_bytes: \"-1\" is not auto or a byte count"},
      {[](AgentFlagValues& f) { f.max_run_bytes = "8GB"; },
       "--max_run_bytes: \"8GB\" is not"},
      {[](AgentFlagValues& f) { f.max_run_bytes = "9000000TiB"; },
       "--max_run_bytes: "},
      {[](AgentFlagValues& f) { f.max_run_bytes = ""; }, "--max_run_bytes: "},
  };
  for (const Case& c : cases) {
    AgentFlagValues flags = GoodFlags();
    c.edit(flags);
    absl::StatusOr<AgentConfig> config = ParseAgentFlags(flags);
    ASSERT_FALSE(config.ok()) << c.message;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(config.status().message().find(c.message), 0u) << config.status();
  }
}

// 100 ms doubling to 2 s, each wait within 20% of its step.
TEST(BackoffTest, DoublesToTwoSecondsWithJitter) {
  Backoff backoff(7);
  const double steps[] = {0.1, 0.2, 0.4, 0.8, 1.6, 2, 2, 2};
  for (double step : steps) {
    const double wait = absl::ToDoubleSeconds(backoff.Next());
    EXPECT_GE(wait, 0.8 * step - 1e-9) << step;
    EXPECT_LE(wait, 1.2 * step + 1e-9) << step;
  }
  // Two agents with other seeds do not wait the same.
  EXPECT_NE(Backoff(1).Next(), Backoff(2).Next());
}

v1::Work RunItem(const std::string& id) {
  v1::Work work;
  work.mutable_run()->set_run_id(id);
  return work;
}
v1::Work CancelItem(const std::string& id) {
  v1::Work work;
  work.mutable_cancel()->set_run_id(id);
  return work;
}

TEST(DispatchInboxTest, ACancelMarksTheCurrentRunAndDropsItIfQueued) {
  DispatchInbox inbox;
  inbox.Deliver(RunItem("a"));
  inbox.Deliver(RunItem("b"));
  ASSERT_EQ(inbox.Next()->run().run_id(), "a");
  inbox.Begin("a");
  inbox.Deliver(CancelItem("x"));  // another run's: "a" goes on
  EXPECT_FALSE(inbox.Cancelled().has_value());
  inbox.Deliver(CancelItem("a"));
  EXPECT_EQ(inbox.Cancelled(), "by the Coordinator");
  inbox.Finish();
  EXPECT_FALSE(inbox.Cancelled().has_value());
  inbox.Deliver(CancelItem("b"));  // "b" never starts
  std::vector<std::string> kinds;
  inbox.Close("gone");
  while (std::optional<v1::Work> work = inbox.Next()) {
    kinds.push_back(work->has_run() ? "run " + work->run().run_id()
                                    : "cancel " + work->cancel().run_id());
  }
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"cancel x", "cancel a", "cancel b"}));
}

// The reader may deliver a cancel after the runner took the run from the
// queue and before it called Begin: the run must still be cancelled (a run
// that ignored it would go on alone while its peers stopped).
TEST(DispatchInboxTest, ACancelBetweenNextAndBeginStillCancelsTheRun) {
  DispatchInbox inbox;
  inbox.Deliver(RunItem("a"));
  ASSERT_EQ(inbox.Next()->run().run_id(), "a");
  inbox.Deliver(CancelItem("a"));
  inbox.Begin("a");
  EXPECT_EQ(inbox.Cancelled(), "by the Coordinator");
  inbox.Finish();
  EXPECT_FALSE(inbox.Cancelled().has_value());
}

TEST(DispatchInboxTest, TheStreamsEndCancelsTheRunAndDropsQueuedRuns) {
  DispatchInbox inbox;
  inbox.Deliver(RunItem("a"));
  inbox.Deliver(RunItem("b"));
  ASSERT_TRUE(inbox.Next().has_value());
  inbox.Begin("a");
  inbox.Close("the dispatch stream ended");
  EXPECT_EQ(inbox.Cancelled(), "the dispatch stream ended");
  inbox.Finish();
  EXPECT_FALSE(inbox.Next().has_value());  // "b" will never be reported
}

TEST(AgentFlagsTest, BackendsAreGlooOrNccl) {
  AgentFlagValues flags = GoodFlags();
  flags.backend = "nccl";
  flags.device = "1";
  absl::StatusOr<AgentConfig> config = ParseAgentFlags(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->backend, Backend::kNccl);
  EXPECT_EQ(config->device, 1);
  flags.backend = "mpi";
  config = ParseAgentFlags(flags);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "--backend: unknown backend \"mpi\"; expected gloo or nccl");
}

// A provider that opens nothing; the cache only decides when to make one.
class NullProvider : public executor::CommunicatorProvider {
 public:
  explicit NullProvider(int* alive) : alive_(alive) { ++*alive_; }
  ~NullProvider() override { --*alive_; }
  absl::StatusOr<executor::Communicator*> Get(const std::vector<int64_t>&,
                                              absl::string_view) override {
    return absl::UnimplementedError("null");
  }

 private:
  int* alive_;
};

TEST(CommunicatorCacheTest, KeepsCommunicatorsWhilePrefixAndTimeoutHold) {
  int alive = 0;
  int max_alive = 0;
  std::vector<CommKey> made;
  CommunicatorCache cache([&](const CommKey& key) {
    made.push_back(key);
    auto provider = std::make_unique<NullProvider>(&alive);
    max_alive = std::max(max_alive, alive);
    return provider;
  });
  const CommKey a{"job/1/run-a", std::chrono::seconds(30)};
  executor::CommunicatorProvider* first = &cache.For(a);
  EXPECT_FALSE(cache.reused());
  EXPECT_EQ(&cache.For(a), first);
  EXPECT_TRUE(cache.reused());
  // Another timeout, then another prefix: new communicators each time.
  cache.For({"job/1/run-a", std::chrono::seconds(5)});
  EXPECT_FALSE(cache.reused());
  cache.For({"job/2/run-c", std::chrono::seconds(5)});
  EXPECT_FALSE(cache.reused());
  // After a failed or cancelled run even the same key reopens.
  cache.Drop();
  EXPECT_EQ(alive, 0);
  cache.For({"job/2/run-c", std::chrono::seconds(5)});
  EXPECT_FALSE(cache.reused());
  EXPECT_EQ(cache.opened(), 4);
  EXPECT_EQ(made.size(), 4u);
  // The old provider is gone before the new one is made.
  EXPECT_EQ(max_alive, 1);
  EXPECT_EQ(alive, 1);
}

// A provider that records the cancels it is given.
class CancelRecorder : public executor::CommunicatorProvider {
 public:
  explicit CancelRecorder(std::vector<std::string>* cancels)
      : cancels_(cancels) {}
  absl::StatusOr<executor::Communicator*> Get(const std::vector<int64_t>&,
                                              absl::string_view) override {
    return absl::UnimplementedError("none");
  }
  void Cancel(absl::string_view why) override {
    cancels_->push_back(std::string(why));
  }

 private:
  std::vector<std::string>* cancels_;
};

// A cancel for the current run reaches the open communicators at once,
// once per run; another run's cancel does not; with none open it is a
// no-op.
TEST(CommunicatorCacheTest, ACancelOfTheCurrentRunReachesItsCommunicators) {
  std::vector<std::string> cancels;
  CommunicatorCache cache([&](const CommKey&) {
    return std::make_unique<CancelRecorder>(&cancels);
  });
  cache.Cancel("before any");  // nothing open
  DispatchInbox inbox([&](const std::string& why) { cache.Cancel(why); });
  inbox.Deliver(RunItem("a"));
  ASSERT_EQ(inbox.Next()->run().run_id(), "a");
  cache.For({"job/1/run-a", std::chrono::seconds(30)});
  inbox.Deliver(CancelItem("x"));
  EXPECT_TRUE(cancels.empty());
  inbox.Deliver(CancelItem("a"));
  inbox.Deliver(CancelItem("a"));
  EXPECT_EQ(cancels, (std::vector<std::string>{"by the Coordinator"}));
  inbox.Finish();
  inbox.Deliver(RunItem("b"));
  std::optional<v1::Work> next;
  while ((next = inbox.Next()) && !next->has_run()) {
  }  // the cancels delivered above come first
  ASSERT_TRUE(next.has_value() && next->run().run_id() == "b");
  inbox.Close("the dispatch stream ended");
  EXPECT_EQ(cancels, (std::vector<std::string>{"by the Coordinator",
                                               "the dispatch stream ended"}));
}

class PrepareRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mesh_ = testing::MakeMesh({2, 2}, {{"A", "B"}});
    absl::StatusOr<Plan> plan = testing::PlanChecked(
        *mesh_, {8, 6}, "S(0),P(sum)", "R,S(1)", PlanOptions());
    ASSERT_TRUE(plan.ok()) << plan.status();
    plan_ = *plan;
    *run_.mutable_mesh() = proto::MeshToProto(*mesh_);
    proto::PlanToProto(*mesh_, *plan_, run_.mutable_plan());
    run_.set_run_id("run-1");
    run_.set_comm_prefix("job/1/run-1");
    run_.set_digest(executor::BatchWork::OfPlan(*mesh_, *plan_).Digest(*mesh_));
    run_.set_iters(3);
    run_.set_warmup(1);
    run_.set_timeout_seconds(2.5);
  }
  std::optional<Mesh> mesh_;
  std::optional<Plan> plan_;
  v1::RunWork run_;
};

TEST_F(PrepareRunTest, AGoodRunConverts) {
  absl::StatusOr<RunSetup> setup = PrepareRun(run_, 4);
  ASSERT_TRUE(setup.ok()) << setup.status();
  EXPECT_EQ(setup->mesh, *mesh_);
  EXPECT_EQ(setup->work.Digest(setup->mesh), run_.digest());
  EXPECT_TRUE(setup->work.single_plan);
  EXPECT_EQ(setup->options.iters, 3);
  EXPECT_EQ(setup->options.warmup, 1);
  EXPECT_EQ(setup->timeout, std::chrono::milliseconds(2500));
  run_.set_timeout_seconds(0);
  EXPECT_EQ(PrepareRun(run_, 4)->timeout, kDefaultCollectiveTimeout);
}

// The run's planned peak on a rank against the agent's bound: at the
// peak it runs, a byte below it is refused naming the flag and both sizes;
// 0 is no bound.
TEST_F(PrepareRunTest, ARunPlannedAboveMaxRunBytesIsRefused) {
  const executor::BatchWork work = executor::BatchWork::OfPlan(*mesh_, *plan_);
  const int64_t peak =
      BatchPeakBytes(*mesh_, work.PlanPointers(), work.schedule);
  ASSERT_GT(peak, 0);
  EXPECT_TRUE(PrepareRun(run_, 4, peak).ok());
  EXPECT_TRUE(PrepareRun(run_, 4, 0).ok());
  absl::StatusOr<RunSetup> setup = PrepareRun(run_, 4, peak - 1);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(setup.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(setup.status().message(),
            absl::StrCat("run: its peak of ", peak,
                         " bytes on a rank exceeds this agent's "
                         "--max_run_bytes ",
                         peak - 1, "; nothing was allocated"));
}

TEST_F(PrepareRunTest, ADigestMismatchNamesBothDigests) {
  run_.set_digest(0x1234abcd);
  absl::StatusOr<RunSetup> setup = PrepareRun(run_, 4);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(setup.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(setup.status().message().find("000000001234abcd"),
            std::string::npos)
      << setup.status();
  EXPECT_NE(
      setup.status().message().find(absl::StrFormat(
          "%016x", executor::BatchWork::OfPlan(*mesh_, *plan_).Digest(*mesh_))),
      std::string::npos)
      << setup.status();
}

TEST_F(PrepareRunTest, BadRunsAreRefusedByField) {
  EXPECT_EQ(PrepareRun(run_, 8).status().code(),
            absl::StatusCode::kFailedPrecondition);  // not the job's world
  struct Case {
    void (*edit)(v1::RunWork&);
    const char* field;
  };
  const Case cases[] = {
      {[](v1::RunWork& r) { r.clear_run_id(); }, "run.run_id"},
      {[](v1::RunWork& r) { r.clear_comm_prefix(); }, "run.comm_prefix"},
      {[](v1::RunWork& r) { r.set_iters(-1); }, "run.iters"},
      {[](v1::RunWork& r) { r.set_warmup(-1); }, "run.warmup"},
      {[](v1::RunWork& r) { r.set_timeout_seconds(-1); },
       "run.timeout_seconds"},
      {[](v1::RunWork& r) {
         r.set_timeout_seconds(std::numeric_limits<double>::infinity());
       },
       "run.timeout_seconds"},
      {[](v1::RunWork& r) { r.mutable_mesh()->clear_shape(); }, "run.mesh: "},
      {[](v1::RunWork& r) { r.mutable_plan()->set_src("S(7),R"); },
       "run.plan: plan.src"},
  };
  for (const Case& c : cases) {
    v1::RunWork run = run_;
    c.edit(run);
    absl::StatusOr<RunSetup> setup = PrepareRun(run, 4);
    ASSERT_FALSE(setup.ok()) << c.field;
    EXPECT_EQ(setup.status().code(), absl::StatusCode::kInvalidArgument)
        << setup.status();
    EXPECT_NE(setup.status().message().find(c.field), std::string::npos)
        << setup.status();
  }
}

}  // namespace
}  // namespace reshard::agent
