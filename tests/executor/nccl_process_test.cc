// The NCCL backend with one process per rank, several ranks on one GPU (the
// arrangement docs/notes/2026-11-26-gpu-nccl-communicators.md ("On a GPU: NCCL
// communicators") describes): every rank gets its own NCCL host identity
// (NCCL_HOSTID) and NCCL's socket transport over loopback, so NCCL connects
// them instead of refusing a duplicate GPU. Four ranks run every collective on
// the world, the reversed world (a split) and two row splits, checked against
// the host's expectation, and send/recv between pairs of members; then a
// rank is SIGKILLed and the survivors' next collective must fail, naming the
// group, within twice the timeout. Without a usable GPU both tests skip,
// saying why. The parent never touches CUDA: a CUDA context does not survive
// fork.
#include <cuda_runtime_api.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/backends/nccl/nccl_communicator.h"
#include "executor/backends/nccl/shared_gpu.h"
#include "executor/launch/local_launch.h"
#include "executor/run/element_ops.h"
#include "executor/stores/file_store.h"
#include "gtest/gtest.h"

namespace reshard::executor {
namespace {

constexpr int kRanks = 4;

// This rank's provider over the file store in `dir`, with the one-GPU
// settings in place (call first in the child).
std::unique_ptr<NcclCommunicatorProvider> RankProvider(
    const std::string& dir, const std::string& prefix, int rank,
    std::chrono::milliseconds timeout) {
  ShareGpu(absl::StrCat("reshard-test-", getpid(), "-", rank));
  return std::make_unique<NcclCommunicatorProvider>(
      std::make_shared<executor::FileStore>(dir), prefix, rank, kRanks,
      NcclOptions{timeout, 0});
}

// Global ranks 0..kRanks-1 in order.
std::vector<int64_t> World() {
  std::vector<int64_t> world(kRanks);
  std::iota(world.begin(), world.end(), 0);
  return world;
}

// A scratch directory for the ranks' file store, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/reshard-nccl-XXXXXX";
    path_ = mkdtemp(tmpl) != nullptr ? tmpl : "";
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class NcclProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::StatusOr<GpuProbe> probe = ProbeGpusInChild();
    if (!probe.ok() || probe->count == 0) {
      GTEST_SKIP() << "no usable GPU ("
                   << (probe.ok() ? probe->detail : probe.status().ToString())
                   << ")";
    }
    ASSERT_FALSE(dir_.path().empty());
  }
  ScratchDir dir_;
};

// (k + offset) mod 31 - 15 as f32, n of them.
std::vector<float> Values(int64_t n, int64_t offset) {
  std::vector<float> v(n);
  for (int64_t k = 0; k < n; ++k)
    v[k] = static_cast<float>((k + offset) % 31 - 15);
  return v;
}

// Runs `op` on a device copy of `in` (of `out_n` output floats) and returns
// the output, or an error text.
template <typename Op>
std::string OnDevice(const std::vector<float>& in, size_t out_n, Op op,
                     std::vector<float>& out) {
  void* d_in = nullptr;
  void* d_out = nullptr;
  if (cudaMalloc(&d_in, in.size() * 4) != cudaSuccess ||
      cudaMalloc(&d_out, std::max<size_t>(out_n, 1) * 4) != cudaSuccess) {
    return "cudaMalloc failed";
  }
  cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice);
  const absl::Status s = op(d_in, d_out);
  out = std::vector<float>(out_n);
  cudaMemcpy(out.data(), d_out, out_n * 4, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  return s.ok() ? "" : std::string(s.message());
}

// The sum over `group` of every member's Values(n, member).
std::vector<float> GroupSum(const std::vector<int64_t>& group, int64_t n) {
  std::vector<float> sum(n, 0);
  for (int64_t member : group) {
    const std::vector<float> v = Values(n, member);
    for (int64_t k = 0; k < n; ++k) sum[k] += v[k];
  }
  return sum;
}

// all_gather and all_reduce on `group`, checked against the host's
// expectation; "" when both agree.
std::string CheckGatherAndReduce(Communicator& comm,
                                 const std::vector<int64_t>& group, int64_t n) {
  const int64_t g = static_cast<int64_t>(group.size());
  const std::vector<float> mine = Values(n, group[comm.index()]);
  std::vector<float> out, want;
  std::string e = OnDevice(
      mine, n * g,
      [&](void* i, void* o) {
        return comm.AllGather(i, o, n, DType::kFloat32);
      },
      out);
  for (int64_t member : group) {
    const std::vector<float> v = Values(n, member);
    want.insert(want.end(), v.begin(), v.end());
  }
  if (!e.empty() || out != want)
    return absl::StrCat("all_gather on ", comm.name(), " ", e);
  // AllReduce works in place: its result is copied to the output buffer.
  e = OnDevice(
      mine, n,
      [&](void* i, void* o) {
        const absl::Status s =
            comm.AllReduce(i, n, DType::kFloat32, {ReduceOp::kSum, 1});
        cudaMemcpy(o, i, n * 4, cudaMemcpyDeviceToDevice);
        return s;
      },
      out);
  if (!e.empty() || out != GroupSum(group, n))
    return absl::StrCat("all_reduce on ", comm.name(), " ", e);
  return "";
}

// reduce_scatter and all_to_all on `group`, checked likewise.
std::string CheckScatterAndExchange(Communicator& comm,
                                    const std::vector<int64_t>& group,
                                    int64_t n) {
  const int64_t block = n / static_cast<int64_t>(group.size());
  const std::vector<float> mine = Values(n, group[comm.index()]);
  const std::vector<float> sum = GroupSum(group, n);
  std::vector<float> out;
  std::string e = OnDevice(
      mine, block,
      [&](void* i, void* o) {
        return comm.ReduceScatter(i, o, block, DType::kFloat32,
                                  {ReduceOp::kSum, 1});
      },
      out);
  std::vector<float> want(sum.begin() + comm.index() * block,
                          sum.begin() + (comm.index() + 1) * block);
  if (!e.empty() || out != want)
    return absl::StrCat("reduce_scatter on ", comm.name(), " ", e);
  e = OnDevice(
      mine, n,
      [&](void* i, void* o) {
        return comm.AllToAll(i, o, block, DType::kFloat32);
      },
      out);
  want.clear();
  for (int64_t member : group) {
    const std::vector<float> v = Values(n, member);
    want.insert(want.end(), v.begin() + comm.index() * block,
                v.begin() + (comm.index() + 1) * block);
  }
  if (!e.empty() || out != want)
    return absl::StrCat("all_to_all on ", comm.name(), " ", e);
  return "";
}

// Every collective on `group` (global ranks, this rank among them), checked
// against the host's expectation; "" when all agree.
std::string CheckGroup(Communicator& comm, const std::vector<int64_t>& group) {
  const int64_t n = 96;  // divisible by every group size used
  const std::string e = CheckGatherAndReduce(comm, group, n);
  return e.empty() ? CheckScatterAndExchange(comm, group, n) : e;
}

// Send and Recv between the pairs of members (0,1) and (2,3): the lower
// sends first and the higher receives first (a member's calls run in
// order on one stream, and a send waits for its receive).
std::string CheckPointToPoint(Communicator& comm,
                              CommunicatorProvider& provider,
                              const std::vector<int64_t>& group, int64_t n) {
  const int me = comm.index();
  const int peer = me ^ 1;
  if (peer >= comm.size()) return "";
  const int64_t bytes = n * 4;
  std::vector<float> out;
  const std::string e = OnDevice(
      Values(n, group[me]), n,
      [&](void* in, void* got) {
        absl::Status s = me < peer ? comm.Send(peer, in, bytes)
                                   : comm.Recv(peer, got, bytes);
        if (s.ok()) {
          s = me < peer ? comm.Recv(peer, got, bytes)
                        : comm.Send(peer, in, bytes);
        }
        return s.ok() ? provider.Drain() : s;
      },
      out);
  if (!e.empty() || out != Values(n, group[peer])) {
    return absl::StrCat("send/recv on ", comm.name(), " ", e);
  }
  return "";
}

std::string EveryCollective(const std::string& dir, int rank) {
  const auto provider =
      RankProvider(dir, "every", rank, std::chrono::seconds(30));
  const std::vector<int64_t> world = World();
  const std::vector<int64_t> reversed(world.rbegin(), world.rend());
  const std::vector<int64_t> row =
      rank < 2 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{2, 3};
  for (const auto& [group, name] :
       {std::pair{world, "world"}, {reversed, "reversed"}, {row, "row"}}) {
    absl::StatusOr<Communicator*> comm = provider->Get(group, name);
    if (!comm.ok()) return std::string(comm.status().ToString());
    std::string error = CheckGroup(**comm, group);
    if (error.empty()) error = CheckPointToPoint(**comm, *provider, group, 96);
    if (!error.empty()) return error;
  }
  return "ok";
}

TEST_F(NcclProcessTest, FourRanksOnOneGpuRunEveryCollective) {
  const std::string dir = dir_.path();
  absl::StatusOr<std::vector<ChildResult>> results = RunLocalRanks(
      kRanks, [&](int rank) { return EveryCollective(dir, rank); },
      std::chrono::seconds(180));
  ASSERT_TRUE(results.ok()) << results.status();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ((*results)[r].output, "ok") << "rank " << r;
    EXPECT_EQ((*results)[r].exit_code, 0) << "rank " << r;
  }
}

// Rank 3 dies after one all_reduce; the others' next one must fail, naming
// the group, within twice the 5 s timeout.
std::string SurviveAKill(const std::string& dir, int rank) {
  const auto provider =
      RankProvider(dir, "kill", rank, std::chrono::seconds(5));
  absl::StatusOr<Communicator*> comm = provider->Get(World(), "world");
  if (!comm.ok()) return std::string(comm.status().ToString());
  void* d = nullptr;
  cudaMalloc(&d, 1024 * 4);
  absl::Status first =
      (*comm)->AllReduce(d, 1024, DType::kFloat32, {ReduceOp::kSum, 1});
  if (first.ok()) first = provider->Drain();
  if (!first.ok()) return absl::StrCat("first all_reduce: ", first.message());
  if (rank == kRanks - 1) raise(SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  // The call returns once enqueued; the failure comes from the wait.
  absl::Status s =
      (*comm)->AllReduce(d, 1024, DType::kFloat32, {ReduceOp::kSum, 1});
  if (s.ok()) s = provider->Drain();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return absl::StrCat(s.ok() ? "ok" : "failed", " ", seconds, " ", s.message());
}

TEST_F(NcclProcessTest, AKilledRankFailsTheSurvivorsWithinTwiceTheTimeout) {
  const std::string dir = dir_.path();
  absl::StatusOr<std::vector<ChildResult>> results = RunLocalRanks(
      kRanks, [&](int rank) { return SurviveAKill(dir, rank); },
      std::chrono::seconds(120));
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE((*results)[kRanks - 1].killed);
  for (int r = 0; r + 1 < kRanks; ++r) {
    const std::string& out = (*results)[r].output;
    std::cout << "rank " << r << ": " << out << "\n";
    ASSERT_EQ(out.rfind("failed ", 0), 0u) << "rank " << r << ": " << out;
    const double seconds = std::atof(out.c_str() + 7);
    EXPECT_LT(seconds, 10.0) << out;
    EXPECT_NE(out.find("all_reduce on group world"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace reshard::executor
