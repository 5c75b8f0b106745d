// Tests of the NCCL backend on real GPUs: every collective and dtype on
// device buffers (world of one, and one thread per GPU when there are
// several), avg divisions bit-identical to the host's, and plans run end
// to end in device memory (CudaMemorySpace) and validated. Without a
// usable GPU every test skips, saying why.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/backends/nccl/cuda_memory_space.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/backends/nccl/nccl_communicator.h"
#include "executor/judge/harness.h"
#include "executor/run/element_ops.h"
#include "executor/stores/memory_store.h"
#include "gtest/gtest.h"
#include "tests/planner/test_util.h"

namespace reshard::executor {
namespace {

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                             DType::kFloat16, DType::kInt32,   DType::kInt64};

// Device memory owned for the scope of a test.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(cudaMalloc(&data_, std::max<size_t>(bytes, 1)), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() { return data_; }
  void Upload(const void* host) {
    EXPECT_EQ(cudaMemcpy(data_, host, bytes_, cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  std::vector<char> Download() const {
    std::vector<char> host(bytes_);
    EXPECT_EQ(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }

 private:
  size_t bytes_;
  void* data_ = nullptr;
};

// `count` elements of `dtype` with values (k + offset) mod 31 - 15.
std::vector<char> Values(DType dtype, int64_t count, int64_t offset) {
  std::vector<char> host(count * ItemSize(dtype));
  for (int64_t k = 0; k < count; ++k) {
    StoreInteger(dtype, host.data(), k, (k + offset) % 31 - 15);
  }
  return host;
}

class NcclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<GpuProbe> probe = ProbeGpus();
    ASSERT_TRUE(probe.ok()) << probe.status();
    if (probe->count == 0) GTEST_SKIP() << "no usable GPU: " << probe->detail;
    gpus_ = probe->count;
  }
  int gpus_ = 0;
};

// gpu-check.sh logs this line: which NCCL and CUDA runtime a run loaded.
TEST(NcclVersionsTest, LoadedAndBuiltWith) {
  absl::StatusOr<std::string> versions = NcclRuntimeVersions();
  ASSERT_TRUE(versions.ok()) << versions.status();
  std::cout << "versions: " << *versions << "\n";
  EXPECT_TRUE(absl::StartsWith(*versions, "NCCL 2.")) << *versions;
  EXPECT_TRUE(absl::StrContains(*versions, "), CUDA runtime ")) << *versions;
}

// Without a usable GPU (this test's only case) the provider says so,
// naming the group, instead of crashing in CUDA.
TEST(NcclNoGpuTest, GetFailsClearly) {
  absl::StatusOr<GpuProbe> probe = ProbeGpus();
  ASSERT_TRUE(probe.ok()) << probe.status();
  if (probe->count > 0) GTEST_SKIP() << "a GPU is usable";
  auto store = std::make_shared<executor::MemoryStore>();
  NcclCommunicatorProvider provider(store, "none", 0, 2,
                                    {std::chrono::seconds(1), -1});
  absl::StatusOr<Communicator*> comm = provider.Get({1, 0}, "A");
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(comm.status().message(),
            absl::StrCat("nccl: connecting group A (ranks [1,0]): no usable "
                         "GPU (",
                         probe->detail, ")"));
  EXPECT_EQ(provider.Get({1, 2}, "B").status().code(),
            absl::StatusCode::kInvalidArgument);  // rank 0 not a member
  EXPECT_EQ(UsableGpuCount().value_or(-1), 0);
}

TEST_F(NcclTest, WorldOfOneEveryOpAndDtype) {
  auto store = std::make_shared<executor::MemoryStore>();
  NcclCommunicatorProvider provider(store, "one", 0, 1,
                                    {std::chrono::seconds(20), 0});
  absl::StatusOr<Communicator*> comm = provider.Get({0}, "A");
  ASSERT_TRUE(comm.ok()) << comm.status();
  const int64_t n = 1000;
  for (DType dtype : kDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const std::vector<char> x = Values(dtype, n, 0);
    DeviceBuffer in(x.size()), out(x.size());
    in.Upload(x.data());
    ASSERT_TRUE((*comm)->AllGather(in.get(), out.get(), n, dtype).ok());
    EXPECT_EQ(out.Download(), x);
    ASSERT_TRUE((*comm)->AllToAll(in.get(), out.get(), n, dtype).ok());
    EXPECT_EQ(out.Download(), x);
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
      out.Upload(x.data());
      ASSERT_TRUE((*comm)->AllReduce(out.get(), n, dtype, {op, 1}).ok());
      EXPECT_EQ(out.Download(), x);
    }
    // avg / {sum,avg}: an IEEE division on the device, bit-identical to
    // the host's.
    for (Reduction r : {Reduction{ReduceOp::kAvg, 3}, {ReduceOp::kSum, 7}}) {
      std::vector<char> expected = x;
      DivideElements(dtype, expected.data(), n, r.avg_divisor);
      out.Upload(x.data());
      ASSERT_TRUE((*comm)->AllReduce(out.get(), n, dtype, r).ok());
      EXPECT_EQ(out.Download(), expected);
      ASSERT_TRUE(
          (*comm)->ReduceScatter(in.get(), out.get(), n, dtype, r).ok());
      EXPECT_EQ(out.Download(), expected);
    }
  }
}

// One rank per GPU (threads): the world in its own order and reversed
// (a split whose key order is not the world's).
void RankThread(std::shared_ptr<executor::KeyValueStore> store, int rank,
                int world) {
  NcclCommunicatorProvider provider(store, "threads", rank, world,
                                    {std::chrono::seconds(30), rank});
  std::vector<int64_t> ranks(world);
  std::iota(ranks.begin(), ranks.end(), 0);
  std::vector<int64_t> reversed(ranks.rbegin(), ranks.rend());
  for (const auto& group : {ranks, reversed}) {
    absl::StatusOr<Communicator*> comm =
        provider.Get(group, group == ranks ? "world" : "reversed");
    ASSERT_TRUE(comm.ok()) << comm.status();
    const int64_t n = 257;
    const int index = (*comm)->index();
    const DType dtype = DType::kFloat32;
    const std::vector<char> mine = Values(dtype, n, group[index]);
    DeviceBuffer in(mine.size()), all(mine.size() * world);
    in.Upload(mine.data());
    ASSERT_TRUE((*comm)->AllGather(in.get(), all.get(), n, dtype).ok());
    const std::vector<char> gathered = all.Download();
    for (int j = 0; j < world; ++j) {
      EXPECT_EQ(std::memcmp(gathered.data() + j * mine.size(),
                            Values(dtype, n, group[j]).data(), mine.size()),
                0)
          << "block " << j << " of rank " << rank;
    }
    ASSERT_TRUE(
        (*comm)->AllReduce(in.get(), n, dtype, {ReduceOp::kAvg, 1}).ok());
    std::vector<char> expected(mine.size());
    for (int64_t k = 0; k < n; ++k) {
      double sum = 0;
      for (int j = 0; j < world; ++j) sum += (k + j) % 31 - 15;
      static_cast<float*>(static_cast<void*>(expected.data()))[k] =
          static_cast<float>(sum) / static_cast<float>(world);
    }
    EXPECT_EQ(in.Download(), expected) << "rank " << rank;
  }
}

TEST_F(NcclTest, OneThreadPerGpu) {
  if (gpus_ < 2) GTEST_SKIP() << "needs 2 GPUs, found " << gpus_;
  const int world = std::min(gpus_, 8);
  auto store = std::make_shared<executor::MemoryStore>();
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back(RankThread, store, r, world);
  for (auto& t : threads) t.join();
}

// Whole plans on device memory: the runner's copies as device tables on
// the legacy default stream, NCCL's collectives on the provider's stream
// ordered with them by events, one host wait per execution; every rank
// validates (docs/DESIGN.md §6.2).
TEST_F(NcclTest, PlansRunInDeviceMemoryAndValidate) {
  const int world = std::min(gpus_, 4);
  const Mesh mesh = testing::MakeMesh({world});
  auto store = std::make_shared<executor::MemoryStore>();
  for (const auto& [src, dst] : {std::pair{"S(0)", "R"},
                                 {"P(sum)", "R"},
                                 {"S(0)", "S(1)"},
                                 {"S(1)", "P(sum)"},
                                 {"P(avg)", "S(1)"}}) {
    SCOPED_TRACE(std::string(src) + " -> " + dst);
    absl::StatusOr<Plan> plan =
        testing::PlanChecked(mesh, {9, 13}, src, dst, PlanOptions{});
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<RankReport> reports(world);
    std::vector<int64_t> waits(world), nccl_waits(world);
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r) {
      threads.emplace_back([&, r] {
        NcclCommunicatorProvider nccl(store,
                                      absl::StrCat("plan/", src, "/", dst), r,
                                      world, {std::chrono::seconds(30), r});
        auto space = CudaMemorySpace::Create(r);
        ASSERT_TRUE(space.ok()) << space.status();
        HarnessOptions harness;
        harness.iters = 3;
        harness.warmup = 1;
        RunOptions run;
        run.space = space->get();
        reports[r] = RunGenerated(mesh, BatchWork::OfPlan(mesh, *plan), r, nccl,
                                  run, harness);
        waits[r] = (*space)->synchronizations();
        nccl_waits[r] = nccl.host_waits();
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < world; ++r) {
      const RankReport& report = reports[r];
      EXPECT_TRUE(report.status.ok()) << report.status;
      EXPECT_FALSE(report.WhyNotValidated().has_value())
          << *report.WhyNotValidated();
      EXPECT_EQ(waits[r], 4) << "rank " << r << ": one wait per execution";
      // The collectives' waits: at most one per execution, plus the
      // digest exchange's and the validation's.
      EXPECT_LE(nccl_waits[r], 4 + 2) << "rank " << r;
    }
  }
}

}  // namespace
}  // namespace reshard::executor
