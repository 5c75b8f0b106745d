// PyTorch's own planners against Reshard's torch modes and `optimal`, on the
// same requests: a record of the installed PyTorch
// (tests/python/torch_planner_record.py, whose `us` is the time PyTorch's
// `_gen_transform_infos_non_cached` took) and Reshard's MakePlan for each of
// its requests, cold, in this process. Prints, per planner, the median time
// over requests and the median of the per-request ratio PyTorch / Reshard,
// and for `optimal` the same by the mesh's number of dims.
//
//   torch_speed RECORD.jsonl [REPEATS]
//
// Each request is planned REPEATS times (default 5) and its median kept.
// Both sides plan without the merge pass, on CPU's devices per host (1).
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/median.h"
#include "planner/search/planner.h"
#include "tests/json_lite.h"
#include "tests/planner/torch_record.h"

namespace reshard {
namespace {

using testing::Json;

struct Series {
  std::vector<double> pytorch_us, reshard_us, ratio;
};

// Reshard's median time over `repeats` cold plans of record `r`, or < 0
// when it does not plan the request.
double ReshardMicros(const Json& r, PlannerKind planner, int repeats) {
  absl::StatusOr<testing::RecordedRequest> asked =
      testing::RequestOf(r, {planner, CostModelKind::kTorch, false, 1});
  if (!asked.ok()) return -1;
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Plan> plan = MakePlan(asked->mesh, asked->request);
    const std::chrono::duration<double, std::micro> took =
        std::chrono::steady_clock::now() - start;
    if (!plan.ok()) return -1;
    times.push_back(took.count());
  }
  return Median(times);
}

// The number of dims of record `r`'s mesh (0 when it does not parse).
int MeshDims(const Json& r) {
  absl::StatusOr<testing::RecordedRequest> asked = testing::RequestOf(
      r, {PlannerKind::kOptimal, CostModelKind::kTorch, false, 1});
  return asked.ok() ? asked->mesh.ndim() : 0;
}

void Add(Series& s, double pytorch_us, double reshard_us) {
  if (reshard_us <= 0) return;
  s.pytorch_us.push_back(pytorch_us);
  s.reshard_us.push_back(reshard_us);
  s.ratio.push_back(pytorch_us / reshard_us);
}

void Print(const std::string& name, const Series& s) {
  std::cout << name << ": " << s.ratio.size() << " requests; median PyTorch "
            << Median(s.pytorch_us) << " us, Reshard " << Median(s.reshard_us)
            << " us; median ratio " << Median(s.ratio) << "x\n";
}

int Run(const std::string& path, int repeats) {
  const std::vector<Json> records = testing::LoadJsonLines(path);
  if (records.empty()) {
    std::cerr << "torch_speed: no records in " << path << "\n";
    return 2;
  }
  Series greedy, graph, optimal_vs_graph;
  Series optimal_by_dims[kMaxMeshDims + 1];  // by the mesh's dims
  for (const Json& r : records) {
    if (r.Has("greedy")) {
      Add(greedy, r["greedy"]["us"].number,
          ReshardMicros(r, PlannerKind::kTorchGreedy, repeats));
    }
    if (!r.Has("graph")) continue;
    const double torch_us = r["graph"]["us"].number;
    Add(graph, torch_us, ReshardMicros(r, PlannerKind::kTorchGraph, repeats));
    const double optimal_us = ReshardMicros(r, PlannerKind::kOptimal, repeats);
    Add(optimal_vs_graph, torch_us, optimal_us);
    Add(optimal_by_dims[MeshDims(r)], torch_us, optimal_us);
  }
  Print("torch_greedy vs PyTorch greedy", greedy);
  Print("torch_graph vs PyTorch graph", graph);
  Print("optimal vs PyTorch graph", optimal_vs_graph);
  for (int dims = 1; dims <= kMaxMeshDims; ++dims) {
    if (optimal_by_dims[dims].ratio.empty()) continue;
    Print(absl::StrCat("optimal vs PyTorch graph, ", dims, "-D meshes"),
          optimal_by_dims[dims]);
  }
  return 0;
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: torch_speed RECORD.jsonl [REPEATS]\n";
    return 2;
  }
  return reshard::Run(argv[1], argc == 3 ? std::atoi(argv[2]) : 5);
}
