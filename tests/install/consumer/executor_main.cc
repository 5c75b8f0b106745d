// Runs the README's example through the installed executor API: four ranks
// as threads meeting in an in-process store, each compiling the plan once
// and running it on its own buffers; prints "validated" when every rank's
// result is right.
#include <iostream>
#include <thread>
#include <vector>

#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/runtime/data_rule.h"
#include "executor/runtime/plan_runner.h"
#include "executor/stores/memory_store.h"
#include "planner/search/planner.h"

int main() {
  using namespace reshard;
  const Mesh mesh = *Mesh::Create(MeshSpec{{2, 2}, {"A", "B"}, {}, {}, {}});
  const Plan plan = *MakePlan(
      mesh, *ParsePlanRequest(mesh, {8, 6}, "f32", "P(sum),S(1)", "R,R", {}));
  auto store = std::make_shared<executor::MemoryStore>();
  std::vector<int> ok(4, 0);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    ranks.emplace_back([&, rank] {
      executor::GlooCommunicatorProvider comms(store, "consumer", rank, {});
      auto runner = executor::PlanRunner::Compile(mesh, plan, rank, comms);
      if (!runner.ok()) return;
      std::vector<float> in((*runner)->SourceNumel());
      std::vector<float> out((*runner)->ResultNumel());
      executor::FillSource(mesh, plan.tensor, plan.src, rank, in.data());
      for (int i = 0; i < 3; ++i) {
        if (!(*runner)->Run(in.data(), out.data()).ok()) return;
      }
      ok[rank] = executor::ValidateResult(mesh, plan.tensor, plan.dst, rank, 1,
                                          out.data())
                     .ok();
    });
  }
  for (auto& t : ranks) t.join();
  const bool all = ok == std::vector<int>(4, 1);
  std::cout << (all ? "validated" : "wrong") << "\n";
  return all ? 0 : 1;
}
