// Executor benchmarks on real Gloo ranks (one process per rank, loopback
// TCP), every figure a median with its baseline measured in the same run:
//  (a) a plan step through the executor vs the raw Gloo call on the same
//      pre-packed buffer, per op, group size and size;
//  (b) merged vs sequential plans on a 2x2x2 mesh, beside the α-β model;
//  (c) the reduce_scatter options of this Gloo (no reduce_scatter function);
//  (d) Gloo's busbw at 64 MiB against this machine's loopback TCP.
// Usage: executor_bench [--quick] [--only OP] [--same]
//   --quick: fewer sizes, for a smoke run; --only OP: just (a), for one op;
//   --same: just (a), the raw call timed against itself, so that its ratio
//   column reads the method's own noise.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/median.h"
#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/backends/provider_factory.h"
#include "executor/judge/data_rule.h"
#include "executor/judge/harness.h"
#include "executor/launch/local_launch.h"
#include "executor/run/plan_runner.h"
#include "executor/stores/file_store.h"
#include "executor/stores/rendezvous_dir.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/alltoall.h"
#include "gloo/math.h"
#include "gloo/reduce_scatter.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/device.h"
#include "planner/cost/collective_factors.h"
#include "planner/search/planner.h"

namespace reshard {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * 1024;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Iterations for a point: about 0.4 s of 1 GB/s traffic, at least 5.
int ItersFor(int64_t bytes) {
  return static_cast<int>(
      std::clamp<int64_t>(400 * kMiB / (bytes + 1), 5, 200));
}

// One rank's raw Gloo context over all ranks (the baseline's).
std::shared_ptr<gloo::Context> RawContext(const std::string& dir, int rank,
                                          int size) {
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore files(dir);
  gloo::rendezvous::PrefixStore store("raw", files);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(std::chrono::seconds(60));
  context->connectFullMesh(store, device);
  return context;
}

// Runs `body(rank)` on `ranks` processes; returns rank 0's output.
std::string OnRanks(int ranks, const std::function<std::string(int)>& body) {
  auto children =
      executor::RunLocalRanks(ranks, body, std::chrono::minutes(20));
  if (!children.ok() || (*children)[0].exit_code != 0) {
    std::cerr << "bench ranks failed\n";
    std::exit(1);
  }
  return (*children)[0].output;
}

// What table (a) measures.
struct StepTable {
  bool quick = false;
  std::string only;   // one op's name, or every op
  bool same = false;  // the raw call on both sides (A/A)
};

struct OpCase {
  StepOp op;
  const char* src;
  const char* dst;
};

constexpr OpCase kOps[] = {{StepOp::kAllGather, "S(0)", "R"},
                           {StepOp::kAllReduce, "P(sum)", "R"},
                           {StepOp::kReduceScatter, "P(sum)", "S(0)"},
                           {StepOp::kAllToAll, "S(0)", "S(1)"}};

// The one-step plan of `op` on a 1-D mesh of `n` whose padded buffer (the
// all_gather output, the others' input) is `bytes` of float32.
Plan OneStepPlan(const Mesh& mesh, const OpCase& c, int64_t bytes) {
  const int64_t n = mesh.world_size();
  const int64_t elements = std::max<int64_t>(n * n, bytes / 4);
  std::vector<int64_t> shape = {n * n, elements / (n * n)};
  return *MakePlan(
      mesh, *ParsePlanRequest(mesh, shape, "f32", c.src, c.dst, PlanOptions()));
}

// The raw Gloo call of `op` on pre-packed buffers of `bytes` (float32).
void RawCall(const std::shared_ptr<gloo::Context>& ctx, StepOp op,
             std::vector<float>& in, std::vector<float>& out) {
  const int n = ctx->size;
  switch (op) {
    case StepOp::kAllGather: {
      gloo::AllgatherOptions o(ctx);
      o.setInput(in.data(), out.size() / n);
      o.setOutput(out.data(), out.size());
      gloo::allgather(o);
      return;
    }
    case StepOp::kAllReduce: {
      gloo::AllreduceOptions o(ctx);
      o.setInput(in.data(), in.size());
      o.setOutput(out.data(), out.size());
      o.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(
              &gloo::sum<float>));
      gloo::allreduce(o);
      return;
    }
    case StepOp::kAllToAll: {
      gloo::AlltoallOptions o(ctx);
      o.setInput(in.data(), in.size());
      o.setOutput(out.data(), out.size());
      gloo::alltoall(o);
      return;
    }
    default:
      return;
  }
}

std::vector<int64_t> Sizes(bool quick) {
  if (quick) return {kKiB, kMiB};
  return {kKiB, 16 * kKiB, 256 * kKiB, kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB};
}

// The raw baseline's buffers: the step's input and output, pre-packed.
void RawBuffers(int64_t step_in, int64_t step_out, std::vector<float>& in,
                std::vector<float>& out) {
  in.assign(step_in, 1.0f);
  out.assign(step_out, 0.0f);
}

// The two calls timed in alternating blocks of `per_block` (after two
// untimed calls of each): a slow phase of the machine (another process,
// the page cache) then lands on both sides of a block pair alike. Every
// rank runs the same sequence, so the collectives pair up. Returns the
// median over block pairs of a's block median over b's. Thirty pairs: at
// ten, 4 ranks on this 2-core machine read 0.82-1.16 timed against
// themselves (`--same`).
constexpr int kBlocks = 30;
double TimeInBlocks(int iters, const std::function<void()>& a,
                    const std::function<void()>& b, std::vector<double>& a_s,
                    std::vector<double>& b_s) {
  const int per_block = std::max(5, iters / 2);
  for (int i = 0; i < 2; ++i) {
    a();
    b();
  }
  std::vector<double> ratios;
  for (int block = 0; block < kBlocks; ++block) {
    const bool a_first = block % 2 == 0;
    std::vector<double> block_s[2];
    for (int side = 0; side < 2; ++side) {
      const bool run_a = (side == 0) == a_first;
      for (int i = 0; i < per_block; ++i) {
        const auto t = Clock::now();
        run_a ? a() : b();
        block_s[run_a ? 0 : 1].push_back(Seconds(t));
      }
    }
    a_s.insert(a_s.end(), block_s[0].begin(), block_s[0].end());
    b_s.insert(b_s.end(), block_s[1].begin(), block_s[1].end());
    ratios.push_back(Median(block_s[0]) / Median(block_s[1]));
  }
  return Median(ratios);
}

// (a) one rank's measurements: "op n bytes exec_median raw_median" lines.
std::string StepVsRawOnRank(int rank, int n, const std::string& dir,
                            const StepTable& table) {
  const Mesh mesh = *Mesh::Create(MeshSpec{{n}, {"A"}});
  std::unique_ptr<executor::CommunicatorProvider> owned =
      executor::MakeProvider(
          Backend::kGloo, {std::make_shared<executor::FileStore>(dir), "exec",
                           rank, n, std::chrono::seconds(120)});
  executor::CommunicatorProvider& provider = *owned;
  auto raw = RawContext(dir, rank, n);
  std::string lines;
  for (const OpCase& c : kOps) {
    if (!table.only.empty() && StepOpName(c.op) != table.only) continue;
    for (int64_t bytes : Sizes(table.quick)) {
      const int64_t scale = c.op == StepOp::kAllToAll ? n : 1;
      const Plan plan = OneStepPlan(mesh, c, bytes * scale);
      auto runner = executor::PlanRunner::Compile(mesh, plan, rank, provider);
      if (!runner.ok()) std::exit(3);
      std::vector<float> in((*runner)->SourceNumel(), 1.0f);
      std::vector<float> out((*runner)->ResultNumel());
      std::vector<float> raw_in, raw_out;
      RawBuffers(in.size(), out.size(), raw_in, raw_out);
      // reduce_scatter has no raw Gloo call: its baseline is the executor's
      // own communicator on the pre-packed buffer (the runner's overhead).
      std::vector<int64_t> ranks(n);
      for (int r = 0; r < n; ++r) ranks[r] = r;
      executor::Communicator* comm = *provider.Get(ranks, "A");
      auto baseline = [&] {
        if (c.op != StepOp::kReduceScatter) {
          return RawCall(raw, c.op, raw_in, raw_out);
        }
        (void)comm->ReduceScatter(raw_in.data(), raw_out.data(), raw_out.size(),
                                  DType::kFloat32, {});
      };
      auto executor_call = [&] {
        if (!(*runner)->Run(in.data(), out.data()).ok()) std::exit(4);
      };
      std::vector<double> exec_s, raw_s;
      const double ratio = TimeInBlocks(
          ItersFor(bytes),
          table.same ? std::function<void()>(baseline) : executor_call,
          baseline, exec_s, raw_s);
      absl::StrAppend(&lines, StepOpName(c.op), " ", n, " ", bytes, " ",
                      absl::StrFormat("%.9g %.9g %.9g\n", Median(exec_s),
                                      Median(raw_s), ratio));
    }
  }
  return lines;
}

// (c) reduce_scatter options on pre-packed buffers: "n bytes ring
// allreduce_slice halving_doubling" lines.
std::string ReduceScatterOptionsOnRank(int rank, int n, const std::string& dir,
                                       bool quick) {
  std::vector<int64_t> ranks(n);
  for (int r = 0; r < n; ++r) ranks[r] = r;
  executor::GlooOptions ring_options, slice_options;
  ring_options.timeout = slice_options.timeout = std::chrono::seconds(120);
  slice_options.reduce_scatter =
      executor::GlooReduceScatter::kAllReduceAndSlice;
  auto store = std::make_shared<executor::FileStore>(dir);
  executor::GlooCommunicatorProvider ring_provider(store, "ring", rank,
                                                   ring_options);
  executor::GlooCommunicatorProvider slice_provider(store, "slice", rank,
                                                    slice_options);
  executor::Communicator* ring = *ring_provider.Get(ranks, "A");
  executor::Communicator* slice = *slice_provider.Get(ranks, "A");
  auto raw = RawContext(dir, rank, n);
  std::string lines;
  const std::vector<int64_t> sizes =
      quick ? std::vector<int64_t>{kMiB}
            : std::vector<int64_t>{64 * kKiB, kMiB, 16 * kMiB, 64 * kMiB};
  for (int64_t bytes : sizes) {
    const int64_t block = bytes / 4 / n;
    std::vector<float> in(block * n, 1.0f), out(block);
    std::vector<double> t_ring, t_slice, t_hd;
    for (int i = 0; i < ItersFor(bytes) + 2; ++i) {
      auto t = Clock::now();
      (void)ring->ReduceScatter(in.data(), out.data(), block, DType::kFloat32,
                                {});
      if (i >= 2) t_ring.push_back(Seconds(t));
      t = Clock::now();
      (void)slice->ReduceScatter(in.data(), out.data(), block, DType::kFloat32,
                                 {});
      if (i >= 2) t_slice.push_back(Seconds(t));
      t = Clock::now();
      gloo::ReduceScatterHalvingDoubling<float> hd(
          raw, {in.data()}, static_cast<int>(in.size()),
          std::vector<int>(n, static_cast<int>(block)));
      hd.run();
      if (i >= 2) t_hd.push_back(Seconds(t));
    }
    absl::StrAppend(&lines, n, " ", bytes, " ",
                    absl::StrFormat("%.9g %.9g %.9g\n", Median(t_ring),
                                    Median(t_slice), Median(t_hd)));
  }
  return lines;
}

// (b) a plan's per-step medians, summed: "total_seconds model_us steps".
std::string PlanTimeOnRank(int rank, const Mesh& mesh, const Plan& plan,
                           const std::string& dir) {
  std::unique_ptr<executor::CommunicatorProvider> provider =
      executor::MakeProvider(
          Backend::kGloo, {std::make_shared<executor::FileStore>(dir), "plan",
                           rank, mesh.world_size(), std::chrono::seconds(120)});
  executor::HarnessOptions harness;
  harness.iters = 15;
  harness.warmup = 3;
  const executor::RankReport r =
      executor::RunGenerated(mesh, executor::BatchWork::OfPlan(mesh, plan),
                             rank, *provider, {}, harness);
  if (!r.status.ok() || r.WhyNotValidated().has_value()) std::exit(5);
  double total = 0;
  for (double s : r.seconds_median) total += s;
  return absl::StrFormat("%.9g %.9g %d\n", total, plan.total_time_us,
                         plan.CommunicatingSteps(mesh));
}

// (d) one TCP stream over loopback: bytes per second, median of 5.
double LoopbackBytesPerSecond(int64_t bytes) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  listen(listener, 1);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::thread sender([&] {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    std::vector<char> buffer(bytes, 1);
    for (int i = 0; i < 7; ++i) {
      for (int64_t done = 0; done < bytes;) {
        const ssize_t n = send(fd, buffer.data() + done, bytes - done, 0);
        if (n <= 0) break;
        done += n;
      }
    }
    close(fd);
  });
  const int fd = accept(listener, nullptr, nullptr);
  std::vector<char> buffer(bytes);
  std::vector<double> rates;
  for (int i = 0; i < 7; ++i) {
    const auto t = Clock::now();
    for (int64_t done = 0; done < bytes;) {
      const ssize_t n = recv(fd, buffer.data() + done, bytes - done, 0);
      if (n <= 0) break;
      done += n;
    }
    if (i >= 2) rates.push_back(static_cast<double>(bytes) / Seconds(t));
  }
  sender.join();
  close(fd);
  close(listener);
  return Median(rates);
}

}  // namespace
}  // namespace reshard

namespace reshard {
namespace {

std::vector<std::vector<std::string>> Rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    rows.push_back(absl::StrSplit(line, ' '));
  }
  return rows;
}

std::string Size(int64_t bytes) {
  return bytes >= kMiB ? absl::StrCat(bytes / kMiB, " MiB")
                       : absl::StrCat(bytes / kKiB, " KiB");
}

// (a), returning rank 0's rows for (d).
std::vector<std::vector<std::string>> PrintStepVsRaw(const StepTable& table) {
  std::cout << (table.same ? "## (a) A/A: raw Gloo call vs itself"
                           : "## (a) executor step vs raw Gloo call")
            << " (medians, same run; ratio: median over alternating blocks)\n\n"
            << "| op | n | bytes | executor us | raw us | ratio | added us |\n"
            << "|---|---|---|---|---|---|---|\n";
  std::vector<std::vector<std::string>> all;
  for (int n : {2, 4}) {
    const auto dir = *executor::RendezvousDir::Create("reshard-bench");
    const auto rows = Rows(OnRanks(n, [&](int rank) {
      return StepVsRawOnRank(rank, n, dir->path(), table);
    }));
    for (const auto& r : rows) {
      const double e = std::stod(r[3]), raw = std::stod(r[4]);
      std::cout << absl::StrFormat(
          "| %s | %s | %s | %.1f | %.1f | %.3f | %.1f |\n", r[0], r[1],
          Size(std::stoll(r[2])), e * 1e6, raw * 1e6, std::stod(r[5]),
          (e - raw) * 1e6);
      all.push_back(r);
    }
  }
  return all;
}

void PrintMergedVsSequential() {
  std::cout << "\n## (b) merged vs sequential plans, mesh A=2,B=2,C=2, "
               "4 MiB float32\n\n"
            << "| case | plan | collectives | measured ms (sum of step "
               "medians) | model us |\n|---|---|---|---|---|\n";
  const Mesh mesh = *Mesh::Create(
      MeshSpec{{2, 2, 2}, {"A", "B", "C"}, {}, {{"A", "C"}, {"A", "B", "C"}}});
  for (auto [src, dst] : {std::pair{"P(sum),R,P(sum)", "R,R,R"},
                          std::pair{"S(0),S(0),S(0)", "R,R,R"}}) {
    for (bool merged : {true, false}) {
      PlanOptions options;
      if (!merged) options.planner = PlannerKind::kTorchGreedy;
      const Plan plan = *MakePlan(
          mesh,
          *ParsePlanRequest(mesh, {1024, 1024}, "f32", src, dst, options));
      const auto dir = *executor::RendezvousDir::Create("reshard-bench");
      const auto r = Rows(OnRanks(8, [&](int rank) {
        return PlanTimeOnRank(rank, mesh, plan, dir->path());
      }))[0];
      std::cout << absl::StrFormat(
          "| %s -> %s | %s | %s | %.2f | %.1f |\n", src, dst,
          merged ? "optimal (merged)" : "torch_greedy (sequential)", r[2],
          std::stod(r[0]) * 1e3, std::stod(r[1]));
    }
  }
}

void PrintReduceScatterOptions(bool quick) {
  std::cout << "\n## (c) reduce_scatter options (median us)\n\n"
            << "| n | bytes | ring (chosen) | all_reduce + slice | Gloo "
               "ReduceScatterHalvingDoubling |\n|---|---|---|---|---|\n";
  for (int n : {2, 4}) {
    const auto dir = *executor::RendezvousDir::Create("reshard-bench");
    for (const auto& r : Rows(OnRanks(n, [&](int rank) {
           return ReduceScatterOptionsOnRank(rank, n, dir->path(), quick);
         }))) {
      std::cout << absl::StrFormat(
          "| %s | %s | %.1f | %.1f | %.1f |\n", r[0], Size(std::stoll(r[1])),
          std::stod(r[2]) * 1e6, std::stod(r[3]) * 1e6, std::stod(r[4]) * 1e6);
    }
  }
}

void PrintLoopback(const std::vector<std::vector<std::string>>& step_rows) {
  const int64_t bytes = 64 * kMiB;
  const double loopback = LoopbackBytesPerSecond(bytes);
  std::cout << "\n## (d) Gloo busbw at 64 MiB vs loopback TCP\n\n"
            << "one loopback TCP stream: "
            << absl::StrFormat("%.3f", loopback / 1e9)
            << " GB/s\n\n| op | n | executor busbw GB/s | raw busbw GB/s | "
               "raw / loopback |\n|---|---|---|---|---|\n";
  for (const auto& r : step_rows) {
    if (std::stoll(r[2]) != bytes) continue;
    const int n = std::stoi(r[1]);
    StepOp op = StepOp::kAllGather;
    for (const OpCase& c : kOps) {
      if (StepOpName(c.op) == r[0]) op = c.op;
    }
    const double factor = BusBandwidthFactor(op, n);
    const double exec_bus = bytes / std::stod(r[3]) * factor / 1e9;
    const double raw_bus = bytes / std::stod(r[4]) * factor / 1e9;
    std::cout << absl::StrFormat("| %s | %d | %.3f | %.3f | %.2f |\n", r[0], n,
                                 exec_bus, raw_bus, raw_bus * 1e9 / loopback);
  }
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  reshard::StepTable table;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") table.quick = true;
    if (arg == "--same") table.same = true;
    if (arg == "--only" && i + 1 < argc) table.only = argv[++i];
  }
  const auto rows = reshard::PrintStepVsRaw(table);
  if (!table.only.empty() || table.same) return 0;
  reshard::PrintReduceScatterOptions(table.quick);
  reshard::PrintMergedVsSequential();
  reshard::PrintLoopback(rows);
  return 0;
}
