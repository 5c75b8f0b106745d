// What a repeated cross-mesh move costs one rank around its transfers,
// against the first move (docs/DESIGN.md §9, a schedule made once): a
// transformer-shaped model (bench/cross_batch_exec.sh's: LAYERS layers of
// qkv, o, up, down and two norms, hidden H, f32) moved by the C++ runner
// on a loopback provider (bench/loopback_provider.h: no peers, nothing
// waits, every count deterministic), as a library user runs it:
//  - BenchPrepare: the batch planned (MakeCrossMeshBatch) and this rank's
//    runner compiled (CrossRunner::CompileBatch, staging allocated);
//  - BenchFirstRun: its first RunBatch on the caller's buffers;
//  - BenchRepeatedRun: each later RunBatch on the same buffers.
// Each is a named function (noipa: kept apart, not merged) so that
// callgrind's toggled counts price them; bench/cross_repeat_callgrind.sh
// takes the bytes' copies out of each, and what is left is the work
// outside the transfers. Without valgrind it prints wall-clock times.
//
//   cross_repeat_bench [--scenario disjoint|colocated] [--rank R]
//                      [--hidden H] [--layers L] [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/loopback_provider.h"
#include "common/median.h"
#include "executor/run/cross_runner.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_request.h"

namespace reshard {
namespace {

struct Options {
  std::string scenario = "disjoint";
  int64_t rank = 4;
  int64_t hidden = 64;
  int layers = 33;
  int reps = 3;
};

struct Scenario {
  Mesh src, dst;
  const char *col_from, *col_to, *row_from, *row_to, *norm_from, *norm_to;
};

Mesh MeshOf(std::vector<int64_t> shape, std::vector<int64_t> ranks) {
  std::vector<std::string> names;
  for (size_t d = 0; d < shape.size(); ++d)
    names.push_back(absl::StrCat("d", d));
  return *Mesh::Create(
      {.shape = std::move(shape), .dim_names = names, .rank_map = ranks});
}

// cross_batch_exec.sh's scenarios: disjoint 2x2 (DDP x TP) on ranks 0-3 to
// 2x2 on 4-7; colocated 2x4 (FSDP x TP) on 0-7 to 4x2 on them permuted.
Scenario ScenarioOf(const std::string& name) {
  if (name == "colocated") {
    return {MeshOf({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}),
            MeshOf({4, 2}, {7, 5, 3, 1, 6, 4, 2, 0}),
            "S(1),S(0)",
            "R,S(0)",
            "S(0),S(1)",
            "R,S(1)",
            "S(0),R",
            "R,R"};
  }
  return {MeshOf({2, 2}, {0, 1, 2, 3}),
          MeshOf({2, 2}, {4, 5, 6, 7}),
          "R,S(0)",
          "S(0),S(0)",
          "R,S(1)",
          "S(1),S(1)",
          "R,R",
          "R,R"};
}

std::vector<CrossBatchItem> ModelItems(const Scenario& s, const Options& o) {
  const int64_t h = o.hidden;
  struct Weight {
    const char* name;
    std::vector<int64_t> shape;
    const char *from, *to;
  };
  const Weight layer[] = {{"qkv", {3 * h, h}, s.col_from, s.col_to},
                          {"o", {h, h}, s.row_from, s.row_to},
                          {"up", {4 * h, h}, s.col_from, s.col_to},
                          {"down", {h, 4 * h}, s.row_from, s.row_to},
                          {"norm1", {128, h}, s.norm_from, s.norm_to},
                          {"norm2", {128, h}, s.norm_from, s.norm_to}};
  std::vector<CrossBatchItem> items;
  for (int i = 0; i < o.layers; ++i) {
    for (const Weight& w : layer) {
      absl::StatusOr<CrossMeshRequest> r = ParseCrossMeshRequest(
          s.src, s.dst, w.shape, "f32", w.from, w.to, {}, {}, {});
      if (!r.ok()) std::exit(3);
      items.push_back({absl::StrCat("layers.", i, ".", w.name), nullptr, *r});
    }
  }
  return items;
}

[[gnu::noipa]] std::unique_ptr<executor::CrossRunner> BenchPrepare(
    const Scenario& s, const std::vector<CrossBatchItem>& items, int64_t rank,
    executor::CommunicatorProvider& provider) {
  absl::StatusOr<CrossBatchPlan> batch =
      MakeCrossMeshBatch(s.src, s.dst, items, kDefaultBucketBytes);
  if (!batch.ok()) std::exit(4);
  std::vector<executor::CrossWork> works;
  for (const absl::StatusOr<CrossMeshPlan>& plan : batch->plans) {
    if (!plan.ok()) std::exit(5);
    works.push_back({s.src, s.dst, *plan});
  }
  absl::StatusOr<std::unique_ptr<executor::CrossRunner>> runner =
      executor::CrossRunner::CompileBatch(std::move(works), kDefaultBucketBytes,
                                          rank, provider);
  if (!runner.ok()) std::exit(6);
  return *std::move(runner);
}

// The caller's tensors: this rank's source and destination blocks.
struct UserBuffers {
  std::vector<std::vector<float>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
};

UserBuffers BuffersOf(const executor::CrossRunner& runner, int tensors) {
  UserBuffers b;
  b.in.resize(tensors);
  b.out.resize(tensors);
  for (int t = 0; t < tensors; ++t) {
    if (runner.is_source(t)) b.in[t].assign(runner.SourceNumel(t), 1.0f);
    if (runner.is_destination(t)) b.out[t].resize(runner.ResultNumel(t));
    b.in_ptrs.push_back(runner.is_source(t) ? b.in[t].data() : nullptr);
    b.out_ptrs.push_back(runner.is_destination(t) ? b.out[t].data() : nullptr);
  }
  return b;
}

void MustRun(executor::CrossRunner& runner, UserBuffers& b) {
  if (!runner.RunBatch(b.in_ptrs, b.out_ptrs).ok()) std::exit(7);
}

[[gnu::noipa]] void BenchFirstRun(executor::CrossRunner& runner,
                                  UserBuffers& b) {
  MustRun(runner, b);
}

[[gnu::noipa]] void BenchRepeatedRun(executor::CrossRunner& runner,
                                     UserBuffers& b) {
  MustRun(runner, b);
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--scenario") {
      o.scenario = value;
    } else if (flag == "--rank") {
      o.rank = std::atoll(value);
    } else if (flag == "--hidden") {
      o.hidden = std::atoll(value);
    } else if (flag == "--layers") {
      o.layers = std::atoi(value);
    } else if (flag == "--reps") {
      o.reps = std::atoi(value);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && o.reps >= 1 && o.layers >= 1 && o.hidden >= 4 &&
         (o.scenario == "disjoint" || o.scenario == "colocated");
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  using namespace reshard;
  Options o;
  if (!ParseArgs(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: cross_repeat_bench [--scenario disjoint|colocated] "
                 "[--rank R] [--hidden H] [--layers L] [--reps N]\n");
    return 2;
  }
  const Scenario s = ScenarioOf(o.scenario);
  const std::vector<CrossBatchItem> items = ModelItems(s, o);
  bench::LoopbackProvider provider(o.rank);
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<executor::CrossRunner> runner =
      BenchPrepare(s, items, o.rank, provider);
  const double prepare = Since(start);
  UserBuffers buffers = BuffersOf(*runner, static_cast<int>(items.size()));
  start = std::chrono::steady_clock::now();
  BenchFirstRun(*runner, buffers);
  const double first = Since(start);
  std::vector<double> repeated;
  for (int i = 0; i < o.reps; ++i) {
    start = std::chrono::steady_clock::now();
    BenchRepeatedRun(*runner, buffers);
    repeated.push_back(Since(start));
  }
  std::printf(
      "cross_repeat_bench: %s, rank %lld, %zu tensors (hidden %lld), %d "
      "exchanges, staging %lld B: prepare %.0f us, first run %.0f us, "
      "repeated run median %.0f us (%d)\n",
      o.scenario.c_str(), static_cast<long long>(o.rank), items.size(),
      static_cast<long long>(o.hidden), runner->exchanges(),
      static_cast<long long>(runner->StagingBytes()), prepare * 1e6,
      first * 1e6, Median(repeated) * 1e6, o.reps);
  return 0;
}
