// The registry of a rank's registered tensors and the binding of a run to
// them (docs/DESIGN.md §6.6): sealed memfds only, checked lengths and
// names, bounds, idempotent registration, memory held by runs past
// unregistering, and bindings that fail naming the rank and the tensor.
#include "agent/tensor_registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "agent/kept_schedules.h"
#include "agent/tensor_binding.h"
#include "gtest/gtest.h"
#include "run_values/batch_work.h"
#include "tests/agent/memfd.h"
#include "tests/planner/test_util.h"

namespace reshard::agent {
namespace {

using testing::Memfd;

TensorRequest Request(const std::string& name, std::vector<int64_t> shape,
                      DType dtype = DType::kFloat32, int64_t offset = 0) {
  TensorRequest r{name, dtype, shape, offset, ItemSize(dtype)};
  for (int64_t d : shape) r.length *= d;
  return r;
}

TEST(TensorRegistryTest, MapsTheClientsMemoryShared) {
  Memfd fd(64);
  const float value = 2.5f;
  ASSERT_EQ(pwrite(fd.get(), &value, sizeof(value), 16), 4);
  TensorRegistry registry;
  ASSERT_TRUE(
      registry.Register(1, Request("w", {4, 2}, DType::kFloat32, 16), fd.get())
          .ok());
  std::optional<TensorEntry> entry = registry.Find("w");
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->shape, (std::vector<int64_t>{4, 2}));
  float seen = 0;
  std::memcpy(&seen, entry->memory->data(), sizeof(seen));
  EXPECT_EQ(seen, value);
  // What the agent writes, the client reads through its own descriptor.
  const float written = -1.0f;
  std::memcpy(entry->memory->data() + 4, &written, sizeof(written));
  float read = 0;
  ASSERT_EQ(pread(fd.get(), &read, sizeof(read), 20), 4);
  EXPECT_EQ(read, written);
  EXPECT_EQ(registry.bytes(), 32);
}

TEST(TensorRegistryTest, RefusesAnUnsealedMemfd) {
  Memfd fd(64, /*seal=*/false);
  TensorRegistry registry;
  const absl::Status s = registry.Register(1, Request("w", {4}), fd.get());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "memory: the file descriptor is not sealed with F_SEAL_SHRINK; "
            "seal it so that a truncate cannot fault the agent");
  EXPECT_FALSE(registry.Find("w").has_value());
}

TEST(TensorRegistryTest, RefusesBadFieldsNamingThem) {
  Memfd fd(64);
  TensorRegistry registry;
  TensorRequest wrong = Request("w", {4});
  wrong.length = 12;
  EXPECT_EQ(registry.Register(1, wrong, fd.get()).message(),
            "length: 12 is not the 16 bytes of shape [4] of float32");
  EXPECT_EQ(
      registry.Register(1, Request("w", {4, 4}, DType::kFloat64), fd.get())
          .message(),
      "length: 0 + 128 bytes run past the file's 64");
  EXPECT_EQ(registry.Register(1, Request("a b", {4}), fd.get()).message(),
            "name: only [A-Za-z0-9._:/-] may name a tensor");
  EXPECT_EQ(registry.Register(1, Request("w", {-1}), fd.get()).message(),
            "shape[0]: must be >= 0");
  TensorRequest no_dtype = Request("w", {4});
  no_dtype.dtype.reset();
  EXPECT_EQ(registry.Register(1, no_dtype, fd.get()).message(),
            "dtype: required");
  EXPECT_EQ(registry.List().size(), 0u);
}

TEST(TensorRegistryTest, RegisteringAgainIsIdempotentAndReplacingKeepsRuns) {
  Memfd first(64), second(64);
  TensorRegistry registry;
  ASSERT_TRUE(registry.Register(1, Request("w", {4}), first.get()).ok());
  const std::shared_ptr<SharedMemory> held = registry.Find("w")->memory;
  ASSERT_TRUE(registry.Register(2, Request("w", {4}), first.get()).ok());
  EXPECT_EQ(registry.Find("w")->memory, held);  // the same mapping
  EXPECT_EQ(registry.Find("w")->owner, 2u);
  ASSERT_TRUE(registry.Register(2, Request("w", {4}), second.get()).ok());
  EXPECT_NE(registry.Find("w")->memory, held);
  EXPECT_EQ(registry.bytes(), 16);
  // A run still holding the old memory reads and writes it safely.
  held->data()[0] = 7;
  EXPECT_EQ(held->data()[0], 7);
}

TEST(TensorRegistryTest, BoundsCountAndBytesNamingTheFlag) {
  Memfd fd(4096);
  TensorRegistry registry(RegistryLimits{2, 1024});
  ASSERT_TRUE(registry.Register(1, Request("a", {4}), fd.get()).ok());
  ASSERT_TRUE(registry.Register(1, Request("b", {4}), fd.get()).ok());
  const absl::Status count = registry.Register(1, Request("c", {4}), fd.get());
  EXPECT_EQ(count.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(count.message(),
            "register c: this agent holds 2 tensors, its --max_tensors (2); "
            "unregister some first");
  const absl::Status bytes =
      registry.Register(1, Request("a", {512}), fd.get());
  EXPECT_EQ(bytes.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(bytes.message(),
            "register a: 2048 bytes more than the 16 registered would pass "
            "this agent's --max_tensor_bytes (1024)");
  EXPECT_EQ(registry.Find("a")->memory->bytes(), 16);  // nothing lost
}

TEST(TensorRegistryTest, UnregisterAndDropOwnerFreeOnlyTheirs) {
  Memfd fd(64);
  TensorRegistry registry;
  ASSERT_TRUE(registry.Register(1, Request("a", {4}), fd.get()).ok());
  ASSERT_TRUE(registry.Register(2, Request("b", {4}), fd.get()).ok());
  ASSERT_TRUE(registry.Register(2, Request("c", {4}), fd.get()).ok());
  registry.DropOwner(2);
  ASSERT_EQ(registry.List().size(), 1u);
  EXPECT_EQ(registry.List()[0].name, "a");
  EXPECT_TRUE(registry.Unregister("a").ok());
  const absl::Status again = registry.Unregister("a");
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(again.message(), "unregister: no tensor \"a\" is registered");
  EXPECT_EQ(registry.bytes(), 0);
}

class BoundRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Plan> plan = reshard::testing::PlanChecked(
        mesh_, {8, 6}, "S(0),R", "R,S(1)", PlanOptions());
    ASSERT_TRUE(plan.ok()) << plan.status();
    work_ = executor::BatchWork::OfPlan(mesh_, *plan);
  }
  // Rank 1's blocks: source [4, 6] and destination [8, 3].
  void RegisterBoth(int64_t into_rows = 8) {
    ASSERT_TRUE(registry_.Register(1, Request("s", {4, 6}), src_.get()).ok());
    ASSERT_TRUE(
        registry_.Register(1, Request("d", {into_rows, 3}), dst_.get()).ok());
  }
  absl::StatusOr<std::unique_ptr<BoundRun>> Bind(bool staging) {
    return BoundRun::Bind(mesh_, work_, 1, {{"s", "d"}}, staging, registry_);
  }

  Mesh mesh_ = reshard::testing::MakeMesh({2, 2});
  executor::BatchWork work_;
  TensorRegistry registry_;
  Memfd src_{96}, dst_{96}, other_{96};
};

TEST_F(BoundRunTest, StagesResultsAndCommitsThem) {
  RegisterBoth();
  absl::StatusOr<std::unique_ptr<BoundRun>> bound = Bind(true);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ((*bound)->staging_bytes(), 96);
  char* staged = static_cast<char*>((*bound)->tensors().results[0]);
  std::memset(staged, 0x5a, 96);
  char first = 0;
  ASSERT_EQ(pread(dst_.get(), &first, 1, 0), 1);
  EXPECT_EQ(first, 0);  // nothing reaches the destination before commit
  ASSERT_TRUE((*bound)->Commit(registry_).ok());
  ASSERT_EQ(pread(dst_.get(), &first, 1, 95), 1);
  EXPECT_EQ(first, 0x5a);
}

// Kept schedules' bindings hold staging; an agent frees the others' to fit
// --max_run_bytes, keeping the one it runs.
TEST_F(BoundRunTest, KeptSchedulesReleaseTheOthersStaging) {
  RegisterBoth();
  KeptSchedules kept;
  auto work = std::make_shared<const executor::CrossRunWork>();
  for (const char* id : {"a", "b"}) {
    absl::StatusOr<std::unique_ptr<BoundRun>> bound = Bind(true);
    ASSERT_TRUE(bound.ok()) << bound.status();
    kept.Keep(id, 1, work).bound = *std::move(bound);
  }
  EXPECT_EQ(kept.HeldBytes("a"), 96);
  EXPECT_EQ(kept.HeldBytes(""), 192);
  EXPECT_EQ(kept.Release("a"), 96);
  EXPECT_NE(kept.Find("a")->bound, nullptr);
  EXPECT_EQ(kept.Find("b")->bound, nullptr);
  EXPECT_NE(kept.Find("b"), nullptr);  // the schedule itself stays
  EXPECT_EQ(kept.HeldBytes(""), 96);
  EXPECT_EQ(kept.Release("a"), 0);
}

TEST_F(BoundRunTest, WithoutStagingTheRunWritesTheDestination) {
  RegisterBoth();
  absl::StatusOr<std::unique_ptr<BoundRun>> bound = Bind(false);
  ASSERT_TRUE(bound.ok());
  EXPECT_FALSE((*bound)->staged());
  EXPECT_EQ((*bound)->tensors().results[0],
            registry_.Find("d")->memory->data());
}

// The rank is named once, by the Coordinator, in the run's failure.
TEST_F(BoundRunTest, FailsNamingTheBindingAndTheTensor) {
  ASSERT_TRUE(registry_.Register(1, Request("s", {4, 6}), src_.get()).ok());
  absl::StatusOr<std::unique_ptr<BoundRun>> missing = Bind(true);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "tensors[0].into: no tensor \"d\" is registered at this agent");
  RegisterBoth(/*into_rows=*/4);
  absl::StatusOr<std::unique_ptr<BoundRun>> misshapen = Bind(true);
  EXPECT_EQ(misshapen.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(misshapen.status().message(),
            "tensors[0].into: \"d\" is registered as float32 [4, 3]; the plan "
            "needs float32 [8, 3] on this rank");
}

TEST_F(BoundRunTest, AllocatesAMissingDestinationWhenAsked) {
  ASSERT_TRUE(registry_.Register(1, Request("s", {4, 6}), src_.get()).ok());
  absl::StatusOr<std::unique_ptr<BoundRun>> bound = BoundRun::Bind(
      mesh_, work_, 1, {{"s", "made", /*allocate=*/true}}, true, registry_);
  ASSERT_TRUE(bound.ok()) << bound.status();
  std::optional<TensorEntry> made = registry_.Find("made");
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->shape, (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(made->owner, kAgentOwner);
  ASSERT_GE(made->memory->fd(), 0);  // what a fetch hands out
  std::memset((*bound)->tensors().results[0], 0x33, 96);
  ASSERT_TRUE((*bound)->Commit(registry_).ok());
  char last = 0;
  ASSERT_EQ(pread(made->memory->fd(), &last, 1, 95), 1);
  EXPECT_EQ(last, 0x33);
  // Sealed both ways: a client that fetched it cannot resize it.
  EXPECT_NE(ftruncate(made->memory->fd(), 8), 0);
  EXPECT_NE(ftruncate(made->memory->fd(), 4096), 0);
  registry_.DropOwner(1);
  EXPECT_TRUE(registry_.Find("made").has_value());  // the agent's own
}

TEST_F(BoundRunTest, ACommitAfterTheDestinationWasReplacedWritesNothing) {
  RegisterBoth();
  absl::StatusOr<std::unique_ptr<BoundRun>> bound = Bind(true);
  ASSERT_TRUE(bound.ok());
  ASSERT_TRUE(registry_.Register(1, Request("d", {8, 3}), other_.get()).ok());
  const absl::Status s = (*bound)->Commit(registry_);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "tensors[0].into: \"d\" was unregistered or replaced during the "
            "run; nothing was written");
}

}  // namespace
}  // namespace reshard::agent
