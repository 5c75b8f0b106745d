// The executor on real Gloo ranks, each its own process: random plans from
// every planner run on every dtype; every rank's result must equal the
// reference simulator's bit for bit (integer values, which every dtype
// holds exactly), validate, and report the checksum of docs/DESIGN.md §6.2 as
// computed here independently.
#include <stdlib.h>

#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/judge/data_rule.h"
#include "executor/judge/harness.h"
#include "executor/launch/local_launch.h"
#include "executor/memory/host_table_space.h"
#include "executor/run/element_ops.h"
#include "executor/stores/file_store.h"
#include "executor/stores/rendezvous_dir.h"
#include "gtest/gtest.h"
#include "planner/core/local_layout.h"
#include "reference/simulator.h"
#include "tests/executor/executor_cases.h"
#include "tests/executor/space_checking.h"

namespace reshard {
namespace {

using executor::RankReport;

// Every position's result under the reference simulator, from the same
// source data (the data rule, as int64).
std::vector<LocalTensor<int64_t>> Simulate(const testing::ExecCase& c) {
  const Plan& plan = c.plan;
  const TensorSpec as_int =
      *TensorSpec::Create(plan.tensor.shape(), DType::kInt64);
  std::vector<LocalTensor<int64_t>> buffers(c.mesh.world_size());
  for (int64_t p = 0; p < c.mesh.world_size(); ++p) {
    buffers[p].shape = LocalBox(c.mesh, plan.src, as_int.shape(), p).extent;
    int64_t n = 1;
    for (int64_t e : buffers[p].shape) n *= e;
    buffers[p].data.resize(n);
    executor::FillSource(c.mesh, as_int, plan.src, p, buffers[p].data.data());
  }
  for (const Step& step : plan.steps) {
    EXPECT_TRUE(RunStep(c.mesh, plan.tensor.shape(), step, buffers).ok());
  }
  return buffers;
}

// Runs `cases` (all on meshes of `world` ranks) on `world` processes; each
// rank reuses its communicators across cases. With `tables`, data moves as
// the device path moves it: every copy a device copy table run unit by
// unit on host memory (HostTableSpace), and every collective must be
// given the space's buffers only (tests/executor/space_checking.h).
// Returns reports[case][pos].
std::vector<std::vector<RankReport>> RunOnRanks(
    const std::vector<const testing::ExecCase*>& cases, int world,
    bool tables) {
  const auto dir = *executor::RendezvousDir::Create("reshard-prop");
  // Process r is global rank r in every case (rank maps are permutations
  // of 0..world-1); it runs whatever position the case's map gives it.
  auto body = [&](int rank) {
    auto store = std::make_shared<executor::FileStore>(dir->path());
    executor::GlooOptions options;
    options.timeout = std::chrono::seconds(30);
    std::string out;
    executor::GlooCommunicatorProvider provider(store, "prop", rank, options);
    testing::RecordingSpace space;
    testing::SpaceCheckingProvider checked(&provider, &space);
    for (const testing::ExecCase* c : cases) {
      executor::HarnessOptions harness;
      harness.keep_result = true;
      executor::RunOptions run;
      if (tables) run.space = &space;
      out += testing::Frame(executor::SerializeReport(executor::RunGenerated(
          c->mesh, executor::BatchWork::OfPlan(c->mesh, c->plan), rank,
          tables ? static_cast<executor::CommunicatorProvider&>(checked)
                 : provider,
          run, harness)));
    }
    return out;
  };
  return testing::RunCaseRanks(world, cases.size(), body, [&](size_t i, int r) {
    return cases[i]->mesh.PositionOfRank(r);
  });
}

void CheckCase(const testing::ExecCase& c, const std::vector<RankReport>& got,
               int index) {
  SCOPED_TRACE(absl::StrCat(
      "case ", index, ": ", c.plan.src.ToString(), " -> ",
      c.plan.dst.ToString(), " ", DTypeName(c.plan.tensor.dtype()), " on ",
      c.mesh.CanonicalText(true), " via ", PlannerName(c.plan.planner)));
  const std::vector<LocalTensor<int64_t>> expected = Simulate(c);
  const DType dtype = c.plan.tensor.dtype();
  testing::ExpectPlannedPeak(got, c.plan.peak_bytes);
  for (int64_t p = 0; p < c.mesh.world_size(); ++p) {
    const RankReport& r = got[p];
    ASSERT_TRUE(r.status.ok()) << "position " << p << ": " << r.status;
    ASSERT_EQ(r.tensors.size(), 1u);
    const executor::TensorCheck& t = r.tensors[0];
    EXPECT_TRUE(t.validated) << t.validation_error;
    EXPECT_EQ(t.checksum,
              testing::ExpectedChecksum(c.mesh, c.plan.tensor, c.plan.dst, p));
    EXPECT_LE(r.peak_bytes, r.memory_bound_bytes);
    const std::vector<int64_t>& want = expected[p].data;
    ASSERT_EQ(t.result.size(), want.size() * ItemSize(dtype));
    for (size_t k = 0; k < want.size(); ++k) {
      const double value = executor::LoadValue(dtype, t.result.data(), k);
      ASSERT_EQ(value, static_cast<double>(want[k]))
          << "position " << p << " element " << k;
    }
  }
}

// `total` random cases from `seed`, run on real ranks (through the device
// copy tables with `tables`) and checked; every op of docs/DESIGN.md §2.3
// must have run.
void RunAndCheck(uint64_t seed, int total, bool tables) {
  std::mt19937_64 rng(seed);
  std::vector<testing::ExecCase> cases;
  std::map<StepOp, int> ops;
  for (int i = 0; i < total; ++i) {
    cases.push_back(testing::RandomExecCase(rng));
    for (const Step& s : cases.back().plan.steps) ++ops[s.op];
  }
  std::map<int64_t, std::vector<const testing::ExecCase*>> by_world;
  std::map<int64_t, std::vector<int>> indices;
  for (size_t i = 0; i < cases.size(); ++i) {
    by_world[cases[i].mesh.world_size()].push_back(&cases[i]);
    indices[cases[i].mesh.world_size()].push_back(static_cast<int>(i));
  }
  for (const auto& [world, group] : by_world) {
    const auto reports = RunOnRanks(group, static_cast<int>(world), tables);
    for (size_t i = 0; i < group.size(); ++i) {
      CheckCase(*group[i], reports[i], indices[world][i]);
      if (::testing::Test::HasFailure()) return;
    }
  }
  for (StepOp op : {StepOp::kAllGather, StepOp::kAllReduce,
                    StepOp::kReduceScatter, StepOp::kAllToAll, StepOp::kChunk,
                    StepOp::kPartition, StepOp::kShardToPartial}) {
    EXPECT_GT(ops[op], 0) << StepOpName(op);
  }
}

TEST(GlooPropertyTest, EveryPlanOnRealRanksMatchesTheSimulator) {
  RunAndCheck(611, testing::ScaledCases(1000), false);
}

// The device path's logic on every machine: the same judge, with every copy run
// from the tables a GPU runs.
TEST(GlooPropertyTest, EveryPlanThroughDeviceCopyTablesMatchesTheSimulator) {
  RunAndCheck(612, testing::ScaledCases(300), true);
}

}  // namespace
}  // namespace reshard
