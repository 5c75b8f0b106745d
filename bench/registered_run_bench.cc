// What a run on registered tensors costs an agent against the same run on
// generated data (docs/DESIGN.md §6.6), on one rank with a loopback
// provider (bench/loopback_provider.h): RunGenerated is the harness's
// RunGenerated as `job run` does it (sources filled by the data rule, one
// execution, validation); RunRegistered binds the rank's registered memfds,
// stages the results (or, to price staging, writes them in place), runs once,
// adds the conservation shares and commits. Each is a named function so that
// callgrind's inclusive counts compare them in one process; the wall clock
// alternates them and reports medians and the paired ratios' quartiles. Usage:
// registered_run_bench [--reps N]
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/tensor_binding.h"
#include "agent/tensor_registry.h"
#include "bench/loopback_plans.h"
#include "bench/loopback_provider.h"
#include "executor/judge/harness.h"
#include "planner/core/local_layout.h"
#include "planner/search/planner.h"

namespace reshard {
namespace {

constexpr int64_t kRank = 3;

// A sealed memfd of `bytes`, registered as `name` with `shape`.
void RegisterMemfd(agent::TensorRegistry& registry, const std::string& name,
                   const std::vector<int64_t>& shape) {
  const int64_t bytes = Numel(shape) * 4;
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, std::max<int64_t>(bytes, 1)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
    std::exit(2);
  }
  agent::TensorRequest request{name, DType::kFloat32, shape, 0, bytes};
  if (!registry.Register(1, request, fd).ok()) std::exit(3);
  close(fd);  // the registry's mapping keeps the memory
}

[[gnu::noinline]] void RunGenerated(const Mesh& mesh,
                                    const executor::BatchWork& work) {
  bench::LoopbackProvider provider(kRank);
  executor::RunGenerated(mesh, work, kRank, provider, {}, {});
}

// With `staging` the results go to staging buffers and are committed;
// without, straight into the destination.
[[gnu::noinline]] void RunRegistered(const Mesh& mesh,
                                     const executor::BatchWork& work,
                                     agent::TensorRegistry& registry,
                                     bool staging) {
  bench::LoopbackProvider provider(kRank);
  absl::StatusOr<std::unique_ptr<agent::BoundRun>> bound =
      agent::BoundRun::Bind(mesh, work, kRank, {{"src", "dst"}}, staging,
                            registry);
  if (!bound.ok()) std::exit(4);
  std::unique_ptr<executor::RunCheck> check =
      executor::ConservedData((*bound)->tensors());
  const executor::RankReport report =
      executor::RunJudged(mesh, work, kRank, provider, *check, {}, {});
  if (!report.status.ok() || !(*bound)->Commit(registry).ok()) std::exit(5);
}

[[gnu::noinline]] void RunStaged(const Mesh& mesh,
                                 const executor::BatchWork& work,
                                 agent::TensorRegistry& registry) {
  RunRegistered(mesh, work, registry, true);
}

[[gnu::noinline]] void RunInPlace(const Mesh& mesh,
                                  const executor::BatchWork& work,
                                  agent::TensorRegistry& registry) {
  RunRegistered(mesh, work, registry, false);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

void Measure(const Mesh& mesh, const Plan& plan, const char* label, int reps) {
  const executor::BatchWork work = executor::BatchWork::OfPlan(mesh, plan);
  const int64_t position = mesh.PositionOfRank(kRank);
  agent::TensorRegistry registry;
  RegisterMemfd(registry, "src",
                LocalBox(mesh, plan.src, plan.tensor.shape(), position).extent);
  RegisterMemfd(registry, "dst",
                LocalBox(mesh, plan.dst, plan.tensor.shape(), position).extent);
  std::vector<double> generated, registered, in_place, ratios, staging;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    RunGenerated(mesh, work);
    generated.push_back(Seconds(start));
    start = std::chrono::steady_clock::now();
    RunStaged(mesh, work, registry);
    registered.push_back(Seconds(start));
    start = std::chrono::steady_clock::now();
    RunInPlace(mesh, work, registry);
    in_place.push_back(Seconds(start));
    ratios.push_back(registered.back() / generated.back());
    staging.push_back(registered.back() / in_place.back());
  }
  std::printf(
      "%-26s generated %7.0f us  registered %7.0f us (in place %7.0f us)  "
      "registered/generated %.3f [%.3f, %.3f]  staged/in place %.3f "
      "[%.3f, %.3f]\n",
      label, Quantile(generated, 0.5) * 1e6, Quantile(registered, 0.5) * 1e6,
      Quantile(in_place, 0.5) * 1e6, Quantile(ratios, 0.5),
      Quantile(ratios, 0.25), Quantile(ratios, 0.75), Quantile(staging, 0.5),
      Quantile(staging, 0.25), Quantile(staging, 0.75));
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  using namespace reshard;
  int reps = 21;
  if (argc == 3 && std::string(argv[1]) == "--reps") reps = std::atoi(argv[2]);
  const Mesh mesh = bench::CubeMesh();
  const struct {
    const char* src;
    const char* dst;
  } cases[] = {{"S(0),R,R", "R,S(1),R"},
               {"S(0),S(1),R", "R,R,S(0)"},
               {"R,S(0),S(1)", "S(1),R,R"},
               {"S(0),R,R", "R,R,R"}};
  std::printf(
      "registered_run_bench: f32 [1024, 512] on mesh 2x2x2, rank %d, "
      "%d paired runs\n",
      static_cast<int>(kRank), reps);
  for (const auto& c : cases) {
    const std::string label = std::string(c.src) + " -> " + c.dst;
    Measure(mesh,
            bench::MustPlan("registered_run_bench", mesh, {1024, 512}, c.src,
                            c.dst),
            label.c_str(), reps);
  }
  return 0;
}
