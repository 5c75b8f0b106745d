// What the runner adds to a collective on NCCL: per size, the raw all_gather on
// device buffers (Communicator::AllGather, then the provider's Drain, which
// returns once the collective is done) against a whole run of a one-step plan
// doing that all_gather (S(0) -> R on a 1-D mesh: the harness's RunGenerated in
// device memory, its pre-flight step excluded, its one host wait included), on
// the same communicator in the same process; medians of --iters after 5
// warm-ups each. Ranks are processes (--ranks, default 2); where they outnumber
// the GPUs each is its own NCCL host over loopback sockets
// (executor/backends/nccl/shared_gpu.h) and only the microseconds added at
// small sizes mean anything. Rank 0 prints the table. Without a usable GPU it
// says why and exits 2.
//
//   runner_overhead_bench [--iters N] [--ranks R]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/median.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/backends/nccl/shared_gpu.h"
#include "executor/backends/provider_factory.h"
#include "executor/judge/harness.h"
#include "executor/launch/local_launch.h"
#include "executor/stores/file_store.h"
#include "planner/search/planner.h"
#include "run_values/batch_work.h"

namespace reshard::executor {
namespace {

constexpr int kWarmup = 5;
constexpr int64_t kSizes[] = {1 << 10, 64 << 20};  // bytes per rank's block

// The raw all_gather of `block_bytes` per rank: median seconds per call.
absl::StatusOr<double> RawSeconds(CommunicatorProvider& provider,
                                  MemorySpace& space, int world,
                                  int64_t block_bytes, int iters) {
  std::vector<int64_t> ranks(world);
  std::iota(ranks.begin(), ranks.end(), 0);
  absl::StatusOr<Communicator*> comm = provider.Get(ranks, "A");
  if (!comm.ok()) return comm.status();
  absl::StatusOr<SpaceBuffer> out = AllocateIn(space, block_bytes * world);
  if (!out.ok()) return out.status();
  const char* in = out->get() + (*comm)->index() * block_bytes;
  std::vector<double> seconds;
  for (int i = 0; i < kWarmup + iters; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s =
        (*comm)->AllGather(in, out->get(), block_bytes / 4, DType::kFloat32);
    if (s.ok()) s = provider.Drain();
    if (!s.ok()) return s;
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    if (i >= kWarmup) seconds.push_back(took.count());
  }
  return Median(seconds);
}

// A run of the one-step plan gathering `block_bytes` per rank: the median
// seconds per execution, as the harness reports it.
absl::StatusOr<double> RunnerSeconds(CommunicatorProvider& provider,
                                     MemorySpace& space, int rank, int world,
                                     int64_t block_bytes, int iters) {
  MeshSpec spec;
  spec.shape = {world};
  spec.dim_names = {"A"};
  absl::StatusOr<Mesh> mesh = Mesh::Create(spec);
  if (!mesh.ok()) return mesh.status();
  absl::StatusOr<PlanRequest> request = ParsePlanRequest(
      *mesh, {world * block_bytes / 4}, "f32", "S(0)", "R", {});
  if (!request.ok()) return request.status();
  absl::StatusOr<Plan> plan = MakePlan(*mesh, *request);
  if (!plan.ok()) return plan.status();
  HarnessOptions harness;
  harness.iters = iters;
  harness.warmup = kWarmup;
  RunOptions run;
  run.space = &space;
  const RankReport report = RunGenerated(*mesh, BatchWork::OfPlan(*mesh, *plan),
                                         rank, provider, run, harness);
  if (!report.status.ok()) return report.status;
  if (std::optional<std::string> why = report.WhyNotValidated()) {
    return absl::InternalError(absl::StrCat("did not validate: ", *why));
  }
  return report.total_seconds_median;
}

// One rank's rows of the table (rank 0's are printed).
std::string RankBody(int rank, int world, int gpus, int iters,
                     const std::string& dir) {
  if (world > gpus)
    ShareGpu(absl::StrCat("reshard-bench-", getppid(), "-", rank));
  const int device = GpuOfRank(rank, gpus);
  auto store = std::make_shared<FileStore>(dir);
  std::unique_ptr<CommunicatorProvider> provider = MakeProvider(
      Backend::kNccl,
      {store, "overhead", rank, world, std::chrono::seconds(60), "", device});
  absl::StatusOr<std::unique_ptr<MemorySpace>> space =
      MakeSpace(Backend::kNccl, device);
  if (!space.ok()) return absl::StrCat("error: ", space.status().ToString());
  std::string rows;
  for (int64_t bytes : kSizes) {
    absl::StatusOr<double> raw =
        RawSeconds(*provider, **space, world, bytes, iters);
    if (!raw.ok()) return absl::StrCat("error: raw ", raw.status().ToString());
    absl::StatusOr<double> run =
        RunnerSeconds(*provider, **space, rank, world, bytes, iters);
    if (!run.ok()) return absl::StrCat("error: run ", run.status().ToString());
    absl::StrAppendFormat(&rows, "| %d KiB | %.1f | %.1f | %+.1f | %.2f |\n",
                          bytes >> 10, *raw * 1e6, *run * 1e6,
                          (*run - *raw) * 1e6, *run / *raw);
  }
  return rows;
}

int Main(int argc, char** argv) {
  int iters = 200, world = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--iters") == 0) iters = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--ranks") == 0) world = std::atoi(argv[i + 1]);
  }
  // Asked in a child: CUDA in this process would not survive the fork of
  // the ranks.
  const absl::StatusOr<GpuProbe> probe = ProbeGpusInChild();
  if (!probe.ok() || probe->count == 0) {
    std::fprintf(
        stderr, "runner_overhead_bench: no usable GPU (%s)\n",
        (probe.ok() ? probe->detail : probe.status().ToString()).c_str());
    return 2;
  }
  const int gpus = probe->count;
  char tmpl[] = "/tmp/reshard-overhead-XXXXXX";
  const std::string dir = mkdtemp(tmpl) != nullptr ? tmpl : "/tmp";
  absl::StatusOr<std::vector<ChildResult>> ranks = RunLocalRanks(
      world, [&](int rank) { return RankBody(rank, world, gpus, iters, dir); },
      std::chrono::minutes(5));
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (!ranks.ok()) {
    std::fprintf(stderr, "runner_overhead_bench: %s\n",
                 ranks.status().ToString().c_str());
    return 1;
  }
  std::printf("%d ranks on %d GPU(s)%s, medians of %d\n", world, gpus,
              world > gpus ? " (shared: socket transport)" : "", iters);
  std::printf(
      "| block per rank | raw all_gather us | runner us | added us | "
      "runner/raw |\n|---|---|---|---|---|\n%s",
      (*ranks)[0].output.c_str());
  int failed = 0;
  for (const ChildResult& child : *ranks) {
    if (child.exit_code != 0 || child.output.rfind("error:", 0) == 0) {
      std::fprintf(stderr, "a rank failed: %s\n", child.output.c_str());
      failed = 1;
    }
  }
  return failed;
}

}  // namespace
}  // namespace reshard::executor

int main(int argc, char** argv) { return reshard::executor::Main(argc, argv); }
