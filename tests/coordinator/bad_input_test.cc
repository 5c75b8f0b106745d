// Every Coordinator RPC given bad input answers the fitting code with a
// message naming the field, on a planner with small store bounds (to reach
// them) and two stand-in agents (fault_fixture.h) in a run: what the
// store held before is all still there.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/core/mesh.h"
#include "planner/search/planner.h"
#include "proto/convert.h"
#include "reshard/v1/coordinator.grpc.pb.h"
#include "tests/coordinator/fault_fixture.h"

namespace reshard {
namespace {

using std::chrono::seconds;
using testing::Agent;
using testing::BackgroundRun;
using testing::LongRun;

// A call with bad input, the code and the message part it must answer.
struct RpcCase {
  const char* what;
  std::function<grpc::Status()> call;
  grpc::StatusCode code;
  std::string message;
};

// RunJob requests of job "bad" that are refused for their source.
struct BadRuns {
  v1::RunJobRequest no_source, bad_plan, empty_batch, huge_batch, uncovered;
};

// No source; a malformed plan; batches: none, too many, and one whose rows
// leave its all_gather out.
BadRuns MakeBadRuns() {
  BadRuns runs;
  runs.no_source.set_job("bad");
  runs.bad_plan = runs.no_source;
  runs.bad_plan.mutable_plan()->mutable_mesh()->add_shape(2);
  runs.empty_batch = runs.no_source;
  MeshSpec line;
  line.shape = {2};
  line.dim_names = {"A"};
  const Mesh mesh = *Mesh::Create(line);
  *runs.empty_batch.mutable_batch()->mutable_mesh() = proto::MeshToProto(mesh);
  runs.huge_batch = runs.empty_batch;
  for (int i = 0; i <= 4096; ++i) {
    runs.huge_batch.mutable_batch()
        ->mutable_work()
        ->mutable_batch()
        ->add_plans();
  }
  runs.uncovered = runs.empty_batch;
  proto::PlanToProto(mesh,
                     *MakePlan(mesh, *ParsePlanRequest(mesh, {8}, "f32", "S(0)",
                                                       "R", PlanOptions())),
                     runs.uncovered.mutable_batch()
                         ->mutable_work()
                         ->mutable_batch()
                         ->add_plans());
  return runs;
}

class BadInputTest : public testing::FencingFixture {
 protected:
  void SetUp() override {
    StartServer(
        {"--max_store_keys_per_job=4", "--max_store_bytes_per_job=4096"});
  }

  // The agent-facing RPCs during run `run` of `generation` (rank 0 is a0).
  std::vector<RpcCase> AgentRpcCases(const v1::AgentId& a0,
                                     const std::string& run,
                                     int64_t generation) {
    return {
        {"Join: rank >= world size",
         [=, this] { return Join(Agent("bad", 2, 7)); }, grpc::INVALID_ARGUMENT,
         "agent.rank: 2 is outside [0, 2)"},
        {"Join: world size 0",
         [=, this] { return Join(Agent("bad", 0, 7), 0); },
         grpc::INVALID_ARGUMENT, "world_size: 0 is outside [1, "},
        {"Join: another world size",
         [=, this] { return Join(Agent("bad", 0, 7), 3); },
         grpc::FAILED_PRECONDITION, "job \"bad\" has world size 2"},
        {"Join: bad job name", [=, this] { return Join(Agent("a b", 0, 7)); },
         grpc::INVALID_ARGUMENT, "agent.job: \"a b\" may only hold"},
        {"StoreSet: unknown job",
         [=, this] { return StoreSet(Agent("nope", 0, 1), run); },
         grpc::NOT_FOUND, "agent.job: no job \"nope\""},
        {"StoreSet: rank >= world size",
         [=, this] { return StoreSet(Agent("bad", 5, 1), run); },
         grpc::INVALID_ARGUMENT,
         "agent.rank: 5 is outside job \"bad\"'s ranks"},
        {"StoreSet: oversized value",
         [=, this] { return StoreSet(a0, run, "big", std::string(8192, 'x')); },
         grpc::RESOURCE_EXHAUSTED,
         "value: setting \"big\" would take the job's rendezvous store past "
         "its maximum of 4096 bytes"},
        {"StoreSet: key too long",
         [=, this] { return StoreSet(a0, run, std::string(2000, 'k'), "v"); },
         grpc::INVALID_ARGUMENT, "key: 2000 bytes, at most 1024"},
        {"StoreGet: unknown job",
         [=, this] { return StoreGet(Agent("nope", 0, 1), run); },
         grpc::NOT_FOUND, "agent.job: no job \"nope\""},
        {"StoreGet: rank >= world size",
         [=, this] { return StoreGet(Agent("bad", 2, 1), run); },
         grpc::INVALID_ARGUMENT,
         "agent.rank: 2 is outside job \"bad\"'s ranks"},
        {"Report: rank >= world size",
         [=, this] { return Report(Agent("bad", 2, 1), generation, run); },
         grpc::INVALID_ARGUMENT,
         "agent.rank: 2 is outside job \"bad\"'s ranks"},
        {"Leave: unknown job", [=, this] { return Leave(Agent("nope", 0, 1)); },
         grpc::NOT_FOUND, "agent.job: no job \"nope\""},
        {"Dispatch: rank >= world size",
         [=, this] { return RefusedDispatch(Agent("bad", 3, 1)); },
         grpc::INVALID_ARGUMENT,
         "agent.rank: 3 is outside job \"bad\"'s ranks"},
    };
  }

  // The job RPCs: RunJob, GetJob, CancelJob.
  std::vector<RpcCase> JobRpcCases(const BadRuns& runs) {
    auto run = [this](const v1::RunJobRequest& request) {
      v1::RunJobResponse ignored;
      return RunJob(request, &ignored, seconds(5));
    };
    return {
        {"RunJob: unknown job", [=] { return run(LongRun("nope", 2, 1)); },
         grpc::NOT_FOUND, "job: no job \"nope\""},
        {"RunJob: world size mismatch",
         [=] { return run(LongRun("bad", 4, 1)); }, grpc::INVALID_ARGUMENT,
         "mesh: world size 4 differs from job \"bad\"'s world size 2"},
        {"RunJob: iters", [=] { return run(LongRun("bad", 2, -1)); },
         grpc::INVALID_ARGUMENT, "iters: -1 is outside [1, 100000]"},
        {"RunJob: no plan", [=, &runs] { return run(runs.no_source); },
         grpc::INVALID_ARGUMENT, "source: set request, plan or batch"},
        {"RunJob: a batch without items",
         [=, &runs] { return run(runs.empty_batch); }, grpc::INVALID_ARGUMENT,
         "batch.work.batch.plans: a batch needs at least one item"},
        {"RunJob: a batch past --max_batch_items",
         [=, &runs] { return run(runs.huge_batch); }, grpc::INVALID_ARGUMENT,
         "batch.work.batch.plans: 4097 entries, at most 4096 "
         "(--max_batch_items)"},
        {"RunJob: a batch whose rows leave a step out",
         [=, &runs] { return run(runs.uncovered); }, grpc::INVALID_ARGUMENT,
         "batch.work.batch.tensors[0]: 0 of its 1 communicating steps are "
         "scheduled"},
        {"RunJob: malformed plan", [=, &runs] { return run(runs.bad_plan); },
         grpc::INVALID_ARGUMENT, "plan.plan.tensor.shape: "},
        {"GetJob: unknown job",
         [this] { return proto::StatusToGrpc(GetJob("nope").status()); },
         grpc::NOT_FOUND, "job: no job \"nope\""},
        {"CancelJob: unknown job",
         [this] {
           std::string id;
           return CancelJob("nope", &id);
         },
         grpc::NOT_FOUND, "job: no job \"nope\""},
    };
  }

  static void ExpectRefused(const std::vector<RpcCase>& cases) {
    for (const RpcCase& c : cases) {
      const grpc::Status status = c.call();
      EXPECT_EQ(status.error_code(), c.code)
          << c.what << ": " << status.error_message();
      EXPECT_NE(status.error_message().find(c.message), std::string::npos)
          << c.what << ": " << status.error_message();
    }
  }

  // Too many keys: with "kept" stored, the fifth key is refused and the
  // four stored stay, readable by rank 1 (a1).
  void ExpectKeyBoundKeepsTheKeys(const v1::AgentId& a0, const v1::AgentId& a1,
                                  const std::string& run) {
    for (const char* key : {"k2", "k3", "k4"}) {
      EXPECT_TRUE(StoreSet(a0, run, key, key).ok()) << key;
    }
    const grpc::Status fifth = StoreSet(a0, run, "k5", "v");
    EXPECT_EQ(fifth.error_code(), grpc::RESOURCE_EXHAUSTED);
    EXPECT_NE(fifth.error_message().find(
                  "key: cannot add \"k5\": the job's rendezvous store holds "
                  "its maximum of 4 keys"),
              std::string::npos)
        << fifth.error_message();
    std::vector<std::string> values;
    EXPECT_TRUE(StoreGet(a1, run, {"kept", "k2", "k3", "k4"}, &values).ok());
    EXPECT_EQ(values, (std::vector<std::string>{"value", "k2", "k3", "k4"}));
    const v1::JobInfo info = *GetJob("bad");
    EXPECT_EQ(info.store_keys(), 4);
    EXPECT_EQ(Connected(info), 2);
  }
};

TEST_F(BadInputTest, EveryRpcRefusesBadInputNamingTheFieldAndLosesNothing) {
  v1::AgentId a0 = Agent("bad", 0, 100);
  v1::AgentId a1 = Agent("bad", 1, 101);
  ASSERT_TRUE(Join(a0).ok());
  ASSERT_TRUE(Join(a1).ok());
  const std::unique_ptr<testing::DispatchStream> s0 = Dispatch(a0);
  const std::unique_ptr<testing::DispatchStream> s1 = Dispatch(a1);
  ASSERT_TRUE(AwaitConnected("bad", 2));
  BackgroundRun caller(*stub_, LongRun("bad", 2, 1), seconds(60));
  v1::Work work;
  EXPECT_TRUE(s0->reader->Read(&work));
  const std::string run = work.run().run_id();
  EXPECT_TRUE(StoreSet(a0, run, "kept", "value").ok());
  ExpectRefused(AgentRpcCases(a0, run, work.run().generation()));
  const BadRuns runs = MakeBadRuns();
  ExpectRefused(JobRpcCases(runs));
  ExpectKeyBoundKeepsTheKeys(a0, a1, run);
  std::string cancelled;
  EXPECT_TRUE(CancelJob("bad", &cancelled).ok());
  EXPECT_EQ(caller.Wait().error_code(), grpc::CANCELLED);
  EXPECT_EQ(GetJob("bad")->store_keys(), 0);  // the run's keys went with it
}

}  // namespace
}  // namespace reshard
