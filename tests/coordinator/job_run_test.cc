// Jobs on real processes over loopback: a reshard-planner serving
// reshard.v1.Coordinator and real reshard-agent processes, driven through the
// Coordinator's gRPC stub. Random plans (uneven shapes, rank maps, flattened
// groups in any order, every op and dtype, every planner; planned by the server
// or given) run on jobs of 8, 4 and 6 agents; every run must validate with
// docs/DESIGN.md §6.2's checksums, and no rendezvous key may outlive its run. A
// RunJob waits for agents still joining; an agent of another protocol is
// refused naming both versions; agents leave on SIGTERM (exit 0) and exit
// non-zero when the Coordinator goes away. Every process started here is
// stopped by its PID and reaped, and every wait is bounded.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/version.h"
#include "executor/judge/data_rule.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "planner/search/planner.h"
#include "proto/convert.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/agent_processes.h"
#include "tests/coordinator/coordinator_calls.h"
#include "tests/executor/executor_cases.h"
#include "tests/planner/random_cases.h"
#include "tests/server/server_process.h"

namespace reshard {
namespace {

using testing::AgentProcesses;

using std::chrono::milliseconds;
using std::chrono::seconds;

// docs/DESIGN.md §6.2: rank r's checksum is that of its box under `dst`
// (Partial dims read as R) filled by g, whatever the plan did.
std::vector<uint64_t> ExpectedChecksums(const Mesh& mesh, const Plan& plan) {
  const std::vector<int64_t>& shape = plan.tensor.shape();
  std::vector<uint64_t> sums(mesh.world_size());
  for (int64_t rank = 0; rank < mesh.world_size(); ++rank) {
    const Box box = LocalBox(mesh, plan.dst, shape, mesh.PositionOfRank(rank));
    std::vector<int64_t> idx(shape.size(), 0);
    uint64_t sum = 0;
    for (int64_t k = 0; k < box.numel(); ++k) {
      int64_t linear = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        linear = linear * shape[d] + box.offset[d] + idx[d];
      }
      sum = executor::ChecksumTerm(sum, k, executor::SourceValue(linear));
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (++idx[d] < box.extent[d]) break;
        idx[d] = 0;
      }
    }
    sums[rank] = sum;
  }
  return sums;
}

// A mesh of exactly `world` ranks: a shape from the issue's list (and a
// few with size-1 dims), a shuffled rank map one time in three, up to two
// flattened groups of dims in random order.
Mesh RandomMeshOf(std::mt19937_64& rng, int world) {
  static const std::map<int, std::vector<std::vector<int64_t>>> kShapes = {
      {8, {{2, 2, 2}, {2, 4}, {4, 2}, {8}, {2, 1, 4}}},
      {6, {{2, 3}, {3, 2}, {6}, {1, 2, 3}}},
      {4, {{2, 2}, {4}, {1, 4}, {2, 1, 2}}}};
  const std::vector<std::vector<int64_t>>& shapes = kShapes.at(world);
  MeshSpec spec;
  spec.shape = shapes[rng() % shapes.size()];
  const int ndim = static_cast<int>(spec.shape.size());
  for (int d = 0; d < ndim; ++d)
    spec.dim_names.push_back(std::string(1, 'A' + d));
  if (rng() % 3 == 0) {
    spec.rank_map.resize(world);
    std::iota(spec.rank_map.begin(), spec.rank_map.end(), 0);
    std::shuffle(spec.rank_map.begin(), spec.rank_map.end(), rng);
  }
  for (int g = 0; ndim >= 2 && g < 2; ++g) {
    std::vector<std::string> names = spec.dim_names;
    std::shuffle(names.begin(), names.end(), rng);
    names.resize(std::uniform_int_distribution<int>(2, ndim)(rng));
    if (std::find(spec.flattened.begin(), spec.flattened.end(), names) ==
        spec.flattened.end()) {
      spec.flattened.push_back(names);
    }
  }
  return *Mesh::Create(spec);
}

struct JobCase {
  Mesh mesh;
  PlanRequest request;
  Plan plan;  // planned here; what RunJob gets when given a plan
};

JobCase RandomJobCase(std::mt19937_64& rng, int world) {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                          DType::kFloat16, DType::kInt32,   DType::kInt64};
  while (true) {
    Mesh mesh = RandomMeshOf(rng, world);
    std::vector<int64_t> shape;
    const int rank = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int d = 0; d < rank; ++d) {
      shape.push_back(std::uniform_int_distribution<int64_t>(1, 9)(rng));
    }
    PlanRequest request;
    request.tensor = *TensorSpec::Create(shape, dtypes[rng() % 6]);
    request.src = testing::RandomState(rng, mesh, rank);
    request.dst = testing::RandomState(rng, mesh, rank);
    request.options = testing::RandomOptions(rng);
    absl::StatusOr<Plan> plan = MakePlan(mesh, request);
    if (plan.ok()) return {std::move(mesh), request, *std::move(plan)};
  }
}

// RunJob on `job`: the server plans `c.request`, or runs `c.plan` as given.
v1::RunJobRequest RunRequest(const std::string& job, const JobCase& c,
                             bool given) {
  v1::RunJobRequest request;
  request.set_job(job);
  if (given) {
    *request.mutable_plan()->mutable_mesh() = proto::MeshToProto(c.mesh);
    proto::PlanToProto(c.mesh, c.plan, request.mutable_plan()->mutable_plan());
  } else {
    v1::PlanRequest* r = request.mutable_request();
    *r->mutable_mesh() = proto::MeshToProto(c.mesh);
    *r->mutable_tensor() = proto::TensorToProto(c.request.tensor);
    *r->mutable_src() = proto::StateToProto(c.request.src);
    *r->mutable_dst() = proto::StateToProto(c.request.dst);
    *r->mutable_options() = proto::OptionsToProto(c.request.options);
  }
  request.set_iters(1);
  request.set_timeout_seconds(10);
  return request;
}

class JobRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(server_.port(), 0) << server_.log();
    stub_ = v1::Coordinator::NewStub(grpc::CreateChannel(
        server_.address(), grpc::InsecureChannelCredentials()));
  }

  grpc::Status RunJob(const v1::RunJobRequest& request,
                      v1::RunJobResponse* response, seconds deadline) {
    return testing::CallRunJob(*stub_, request, response, deadline);
  }

  absl::StatusOr<v1::JobInfo> GetJob(const std::string& job) {
    return testing::CallGetJob(*stub_, job);
  }

  // Waits (bounded) until `job` exists and `done` holds for it.
  bool AwaitJob(const std::string& job,
                const std::function<bool(const v1::JobInfo&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      absl::StatusOr<v1::JobInfo> info = GetJob(job);
      if (info.ok() && done(*info)) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }
  // Waits until at least `agents` agents of `job` are connected.
  bool AwaitAgents(const std::string& job, int agents) {
    return AwaitJob(job, [agents](const v1::JobInfo& info) {
      int connected = 0;
      for (const v1::AgentInfo& agent : info.agents()) {
        connected += agent.connected();
      }
      return connected >= agents;
    });
  }

  // What the random runs covered.
  struct Coverage {
    std::set<std::string> ops;
    std::set<DType> dtypes;
    int merged_steps = 0;  // steps on a group of several mesh dims
  };
  // Runs `runs` random cases on `world` agents of `job`, alternating
  // server-planned and given plans, and checks each.
  void RunRandomPlans(const std::string& job, int world, int runs,
                      uint64_t seed, Coverage* coverage);

  testing::ServerProcess server_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

void JobRunTest::RunRandomPlans(const std::string& job, int world, int runs,
                                uint64_t seed, Coverage* coverage) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < runs && !HasFailure(); ++i) {
    const JobCase c = RandomJobCase(rng, world);
    const bool given = i % 2 == 1;
    SCOPED_TRACE(absl::StrCat(
        job, " run ", i, given ? " (given plan): " : " (planned): ",
        c.request.src.ToString(), " -> ", c.request.dst.ToString(), " ",
        DTypeName(c.request.tensor.dtype()), " shape [",
        absl::StrJoin(c.request.tensor.shape(), ","), "] on ",
        c.mesh.CanonicalText(true)));
    v1::RunJobResponse response;
    const grpc::Status status =
        RunJob(RunRequest(job, c, given), &response, seconds(60));
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(response.validated()) << response.validation_error();
    const std::vector<uint64_t> expected = ExpectedChecksums(c.mesh, c.plan);
    ASSERT_EQ(response.tensors_size(), 1);
    ASSERT_EQ(response.tensors(0).checksums_size(), world);
    for (int r = 0; r < world; ++r) {
      EXPECT_EQ(response.tensors(0).checksums(r), expected[r]) << "rank " << r;
    }
    ASSERT_EQ(response.ranks_size(), world);
    // A row's per-execution slowest rank is summarized: at least every
    // rank's median (local steps are not timed: 0); the ranks' own
    // executions stay out of the response.
    for (const v1::StepResult& row : response.steps()) {
      EXPECT_GE(row.slowest_median_seconds(), row.seconds_median()) << row.op();
      if (row.seconds_median() > 0) {
        EXPECT_GT(row.slowest_median_seconds(), 0) << row.op();
      }
    }
    for (const v1::RankReport& rank : response.ranks()) {
      for (const v1::StepTiming& step : rank.steps()) {
        EXPECT_EQ(step.seconds_size(), 0);
      }
    }
    coverage->dtypes.insert(c.request.tensor.dtype());
    for (const v1::Step& step : response.plan().steps()) {
      coverage->ops.insert(step.op());
      coverage->merged_steps += step.mesh_dims_size() > 1;
    }
  }
}

TEST_F(JobRunTest, EightAgentsRunRandomPlansAndKeepNoKeys) {
  AgentProcesses agents(server_.address(), "eight", 8);
  agents.StartAll();
  // The job exists once one agent joined; RunJob waits for the others.
  ASSERT_TRUE(AwaitAgents("eight", 1)) << agents.Logs();
  const int runs = testing::ScaledCases(200);
  Coverage coverage;
  RunRandomPlans("eight", 8, runs, /*seed=*/1301, &coverage);
  absl::StatusOr<v1::JobInfo> info = GetJob("eight");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->store_keys(), 0);
  EXPECT_EQ(info->store_bytes(), 0);
  EXPECT_EQ(info->runs_total(), runs);
  EXPECT_EQ(info->runs_failed(), 0);
  if (runs >= 200) {  // every op of docs/DESIGN.md §2.3 and every dtype ran
    for (const char* op :
         {"all_gather", "all_reduce", "reduce_scatter", "all_to_all", "chunk",
          "partition", "shard_to_partial"}) {
      EXPECT_EQ(coverage.ops.count(op), 1u) << op;
    }
    EXPECT_EQ(coverage.dtypes.size(), 6u);
    EXPECT_GT(coverage.merged_steps, 0) << "no step on a flattened group";
  }
  // SIGTERM (once every agent runs): each leaves and exits 0.
  ASSERT_TRUE(AwaitAgents("eight", 8)) << agents.Logs();
  EXPECT_EQ(agents.Wait(seconds(20), SIGTERM), std::vector<int>(8, 0))
      << agents.Logs();
  if (HasFailure()) ADD_FAILURE() << agents.Logs();
}

TEST_F(JobRunTest, JobsOfFourAndSixAgents) {
  for (int world : {4, 6}) {
    const std::string job = absl::StrCat("job-", world);
    AgentProcesses agents(server_.address(), job, world);
    agents.StartAll();
    ASSERT_TRUE(AwaitAgents(job, 1)) << agents.Logs();
    Coverage coverage;
    RunRandomPlans(job, world, testing::ScaledCases(100), 17 + world,
                   &coverage);
    absl::StatusOr<v1::JobInfo> info = GetJob(job);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->store_keys(), 0);
    ASSERT_TRUE(AwaitAgents(job, world)) << agents.Logs();
    EXPECT_EQ(agents.Wait(seconds(20), SIGTERM), std::vector<int>(world, 0));
    if (HasFailure()) {
      ADD_FAILURE() << agents.Logs();
      return;
    }
  }
}

TEST_F(JobRunTest, ARunWaitsForAgentsStillJoining) {
  AgentProcesses agents(server_.address(), "late", 4);
  agents.Start(0);
  ASSERT_TRUE(AwaitAgents("late", 1)) << agents.Logs();
  std::mt19937_64 rng(5);
  const JobCase c = RandomJobCase(rng, 4);
  v1::RunJobResponse response;
  grpc::Status status;
  std::thread caller([&] {
    status = RunJob(RunRequest("late", c, false), &response, seconds(60));
  });
  // The call waits in the job while ranks 1-3 are missing.
  ASSERT_TRUE(AwaitJob("late", [](const v1::JobInfo& info) {
    return info.run_calls() == 1 && info.state() == "joining";
  }));
  for (int r = 1; r < 4; ++r) agents.Start(r);
  caller.join();
  ASSERT_TRUE(status.ok()) << status.error_message() << agents.Logs();
  EXPECT_TRUE(response.validated()) << response.validation_error();
  ASSERT_EQ(response.tensors_size(), 1);
  std::vector<uint64_t> got(response.tensors(0).checksums().begin(),
                            response.tensors(0).checksums().end());
  EXPECT_EQ(got, ExpectedChecksums(c.mesh, c.plan));
}

// A rank that crashes and comes back is a new incarnation in a new
// generation: the others open new communicators with it and runs go on.
TEST_F(JobRunTest, ARestartedAgentJoinsANewGeneration) {
  AgentProcesses agents(server_.address(), "restart", 4);
  agents.StartAll();
  ASSERT_TRUE(AwaitAgents("restart", 4)) << agents.Logs();
  Coverage coverage;
  RunRandomPlans("restart", 4, 3, 71, &coverage);
  const int64_t generation = GetJob("restart")->generation();
  agents.Kill(2);
  // Once the Coordinator has seen the stream close (it refuses a second
  // live agent for a rank), the new incarnation joins a new generation.
  ASSERT_TRUE(AwaitJob("restart", [](const v1::JobInfo& info) {
    for (const v1::AgentInfo& agent : info.agents()) {
      if (agent.rank() == 2) return !agent.connected();
    }
    return true;
  }));
  agents.Start(2);
  ASSERT_TRUE(AwaitJob("restart", [generation](const v1::JobInfo& info) {
    int connected = 0;
    for (const v1::AgentInfo& agent : info.agents()) {
      connected += agent.connected();
    }
    return info.generation() > generation && connected == 4;
  })) << agents.Logs();
  RunRandomPlans("restart", 4, 3, 72, &coverage);
  EXPECT_EQ(agents.Wait(seconds(20), SIGTERM), std::vector<int>(4, 0));
  if (HasFailure()) ADD_FAILURE() << agents.Logs();
}

// A run whose collectives cannot finish in time fails; its ranks tear
// their communicators down and the next runs, with fresh ones, succeed.
TEST_F(JobRunTest, AfterAFailedRunTheNextRunsSucceed) {
  AgentProcesses agents(server_.address(), "fail", 8);
  agents.StartAll();
  ASSERT_TRUE(AwaitAgents("fail", 8)) << agents.Logs();
  Coverage coverage;
  RunRandomPlans("fail", 8, 2, 81, &coverage);
  // 1 ms for every rendezvous and collective among 8 processes on this
  // machine: some rank times out.
  v1::RunJobRequest hurried;
  hurried.set_job("fail");
  v1::PlanRequest* r = hurried.mutable_request();
  r->mutable_mesh()->add_shape(8);
  r->mutable_tensor()->add_shape(1 << 16);
  r->mutable_src()->set_text("S(0)");
  r->mutable_dst()->set_text("R");
  hurried.set_timeout_seconds(0.001);
  v1::RunJobResponse response;
  const grpc::Status status = RunJob(hurried, &response, seconds(60));
  EXPECT_FALSE(status.ok() && response.validated());
  RunRandomPlans("fail", 8, 4, 82, &coverage);
  EXPECT_EQ(GetJob("fail")->store_keys(), 0);
  EXPECT_EQ(agents.Wait(seconds(20), SIGTERM), std::vector<int>(8, 0));
  if (HasFailure()) ADD_FAILURE() << agents.Logs();
}

// SIGTERM in the middle of a run: every agent finishes the run, reports,
// leaves and exits 0; the run succeeds.
TEST_F(JobRunTest, SigtermFinishesTheCurrentRunFirst) {
  AgentProcesses agents(server_.address(), "term", 4);
  agents.StartAll();
  ASSERT_TRUE(AwaitAgents("term", 4)) << agents.Logs();
  v1::RunJobRequest slow;
  slow.set_job("term");
  v1::PlanRequest* r = slow.mutable_request();
  r->mutable_mesh()->add_shape(4);
  r->mutable_tensor()->add_shape(1 << 20);
  r->mutable_src()->set_text("S(0)");
  r->mutable_dst()->set_text("R");
  slow.set_iters(200);  // long enough that the signal lands mid-run
  slow.set_timeout_seconds(10);
  v1::RunJobResponse response;
  grpc::Status status;
  std::thread caller([&] { status = RunJob(slow, &response, seconds(60)); });
  // (No ASSERT while `caller` runs: leaving would destroy it joinable.)
  // Every agent moves the run's data before the signal.
  EXPECT_TRUE(AwaitJob("term", [&agents](const v1::JobInfo& info) {
    return info.state() == "running" &&
           agents.ExecutingOnEveryRank(info.current_run());
  }));
  const std::vector<int> codes = agents.Wait(seconds(30), SIGTERM);
  caller.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(response.validated()) << response.validation_error();
  EXPECT_EQ(codes, std::vector<int>(4, 0));
  // Agent 0 saw the signal before its run ended (else this proves nothing).
  const std::string logs = agents.Logs();
  const std::string first = logs.substr(0, logs.find("---- agent 1 ----"));
  const size_t signal = first.find("signal 15");
  const size_t ran = first.find(": validated");
  ASSERT_NE(signal, std::string::npos) << first;
  ASSERT_NE(ran, std::string::npos) << first;
  EXPECT_LT(signal, ran) << first;
  if (HasFailure()) ADD_FAILURE() << logs;
}

// An agent of an older protocol would misread or skip what this one's
// agents do (protocol 2's RunWork and RankReport differ from protocol 1's;
// protocol 3's agents begin every run with a pre-flight exchange that
// protocol 2's would not join), so it is refused at Join, before any work
// reaches it.
TEST_F(JobRunTest, AnAgentOfProtocolOneIsRefusedAtJoin) {
  ASSERT_EQ(kCoordinatorProtocol, 3);
  v1::JoinRequest request;
  request.mutable_agent()->set_job("old");
  request.mutable_agent()->set_rank(0);
  request.mutable_agent()->set_incarnation(7);
  request.set_world_size(1);
  request.set_version("0.9.0");
  request.set_protocol(1);
  v1::JoinResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  const grpc::Status status = stub_->Join(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("protocol 1"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("protocol 3"), std::string::npos)
      << status.error_message();
  // Nothing of the refused agent is kept: its job does not exist.
  v1::GetJobRequest get;
  get.set_job("old");
  v1::GetJobResponse job;
  grpc::ClientContext get_context;
  get_context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  EXPECT_EQ(stub_->GetJob(&get_context, get, &job).error_code(),
            grpc::NOT_FOUND);
}

TEST_F(JobRunTest, AnAgentOfAnotherProtocolIsRefusedNamingBothVersions) {
  v1::JoinRequest request;
  request.mutable_agent()->set_job("versions");
  request.mutable_agent()->set_rank(0);
  request.mutable_agent()->set_incarnation(42);
  request.set_world_size(2);
  request.set_version("99.0.0");
  request.set_protocol(kCoordinatorProtocol + 1);
  v1::JoinResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  const grpc::Status status = stub_->Join(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::FAILED_PRECONDITION);
  const std::string& message = status.error_message();
  EXPECT_NE(message.find("99.0.0"), std::string::npos) << message;
  EXPECT_NE(message.find(kReshardVersion), std::string::npos) << message;
  EXPECT_NE(message.find(absl::StrCat("protocol ", kCoordinatorProtocol + 1)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(absl::StrCat("protocol ", kCoordinatorProtocol)),
            std::string::npos)
      << message;
}

TEST_F(JobRunTest, AgentsExitOneWhenRefusedOrWhenTheCoordinatorGoes) {
  AgentProcesses agents(server_.address(), "pair", 2);
  // They rejoin for a second after the stream drops, then give up.
  agents.set_extra_flags({"--reconnect_seconds=1"});
  agents.StartAll();
  ASSERT_TRUE(AwaitAgents("pair", 2)) << agents.Logs();
  // A third agent that disagrees on the world size is refused at Join.
  AgentProcesses stranger(server_.address(), "pair", 3);
  stranger.Start(2);
  EXPECT_EQ(stranger.Wait(seconds(20)), std::vector<int>{1}) << stranger.Logs();
  // The Coordinator stops: the dispatch streams drop, rejoining fails, the
  // agents exit 1.
  EXPECT_EQ(server_.Stop(), 0);
  EXPECT_EQ(agents.Wait(seconds(20)), std::vector<int>(2, 1)) << agents.Logs();
}

}  // namespace
}  // namespace reshard
