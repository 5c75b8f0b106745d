// Holds the device path to its memory on every machine: a run with a
// MemorySpace must hand its communicators only the space's buffers (on a
// GPU, NCCL reads device memory; a host pointer is an illegal address
// there, which host memory cannot show). RecordingSpace is a
// HostTableSpace that remembers its live allocations; the communicators of
// a SpaceCheckingProvider fail any collective whose buffer is not inside
// one, naming the op, the group and the buffer.
//
// It also holds the run to NCCL's completion contract: a collective call
// may return before its data has arrived, and only the provider's Drain
// waits for it. The space refuses to wait (Synchronize) or to read a
// buffer back (Download) while a collective called since the last Drain
// is undrained, which is where a run that forgot to Drain would read
// incomplete results on a GPU.
#ifndef RESHARD_TESTS_EXECUTOR_SPACE_CHECKING_H_
#define RESHARD_TESTS_EXECUTOR_SPACE_CHECKING_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/memory/host_table_space.h"
#include "executor/run/communicator_provider.h"

namespace reshard::testing {

class RecordingSpace : public executor::HostTableSpace {
 public:
  absl::StatusOr<char*> Allocate(int64_t bytes) override {
    absl::StatusOr<char*> data = HostTableSpace::Allocate(bytes);
    if (data.ok()) live_[*data] = bytes;
    return data;
  }
  void Free(char* buffer) override {
    live_.erase(buffer);
    HostTableSpace::Free(buffer);
  }
  absl::Status Synchronize() override {
    absl::Status s = CheckDrained("Synchronize");
    return s.ok() ? HostTableSpace::Synchronize() : s;
  }
  absl::Status Download(char* to, const char* from, int64_t bytes) override {
    absl::Status s = CheckDrained("Download");
    return s.ok() ? HostTableSpace::Download(to, from, bytes) : s;
  }
  // A collective was called; the provider's Drain has waited for all.
  void Called() { undrained_ = true; }
  void Drained() { undrained_ = false; }

  // Whether [p, p + bytes) lies inside one live allocation.
  bool Holds(const void* p, int64_t bytes) const {
    const char* c = static_cast<const char*>(p);
    auto it = live_.upper_bound(c);
    if (it == live_.begin()) return false;
    --it;
    return c >= it->first && c + bytes <= it->first + it->second;
  }

 private:
  absl::Status CheckDrained(const char* call) const {
    if (!undrained_) return absl::OkStatus();
    return absl::InternalError(
        absl::StrCat(call,
                     " while a collective is undrained: its results "
                     "may not have arrived"));
  }

  std::map<const char*, int64_t> live_;
  bool undrained_ = false;
};

class SpaceCheckingCommunicator : public executor::Communicator {
 public:
  SpaceCheckingCommunicator(executor::Communicator* inner,
                            RecordingSpace* space)
      : inner_(inner), space_(space) {}

  int index() const override { return inner_->index(); }
  int size() const override { return inner_->size(); }
  const std::string& name() const override { return inner_->name(); }

  absl::Status AllGather(const void* in, void* out, int64_t block_numel,
                         DType dtype) override {
    absl::Status s =
        Check("all_gather", {{in, 1}, {out, size()}}, block_numel, dtype);
    return s.ok() ? inner_->AllGather(in, out, block_numel, dtype) : s;
  }
  absl::Status AllReduce(void* data, int64_t block_numel, DType dtype,
                         executor::Reduction reduction) override {
    absl::Status s = Check("all_reduce", {{data, 1}}, block_numel, dtype);
    return s.ok() ? inner_->AllReduce(data, block_numel, dtype, reduction) : s;
  }
  absl::Status ReduceScatter(const void* in, void* out, int64_t block_numel,
                             DType dtype,
                             executor::Reduction reduction) override {
    absl::Status s =
        Check("reduce_scatter", {{in, size()}, {out, 1}}, block_numel, dtype);
    return s.ok()
               ? inner_->ReduceScatter(in, out, block_numel, dtype, reduction)
               : s;
  }
  absl::Status AllToAll(const void* in, void* out, int64_t block_numel,
                        DType dtype) override {
    absl::Status s =
        Check("all_to_all", {{in, size()}, {out, size()}}, block_numel, dtype);
    return s.ok() ? inner_->AllToAll(in, out, block_numel, dtype) : s;
  }
  bool SendsRunsInPlace() const override { return inner_->SendsRunsInPlace(); }
  absl::Status AllToAllRuns(
      absl::FunctionRef<executor::SendBlock(int)> send,
      absl::FunctionRef<absl::Span<const executor::ByteRun>(int)> recv,
      void* scratch, void* out, int64_t block_bytes) override {
    absl::Status s = CheckBytes("all_to_all", out, size() * block_bytes);
    if (!s.ok()) return s;
    auto checked = [&](int j) -> executor::SendBlock {
      const executor::SendBlock block = send(j);
      for (const executor::ByteRun& run : block.runs) {
        absl::Status b =
            CheckBytes("all_to_all", block.base + run.offset, run.bytes);
        if (!b.ok() && s.ok()) s = b;
      }
      return block;
    };
    absl::Status call =
        inner_->AllToAllRuns(checked, recv, scratch, out, block_bytes);
    return s.ok() ? call : s;
  }

 private:
  // INTERNAL naming the op, the group and the first buffer (`blocks`
  // blocks long) that the space does not hold; empty buffers pass.
  absl::Status Check(const char* op,
                     std::vector<std::pair<const void*, int>> buffers,
                     int64_t block_numel, DType dtype) const {
    space_->Called();
    const int64_t block_bytes = block_numel * ItemSize(dtype);
    for (const auto& [p, blocks] : buffers) {
      const int64_t bytes = block_bytes * blocks;
      if (bytes > 0 && !space_->Holds(p, bytes)) {
        return absl::InternalError(
            absl::StrCat(op, " on ", name(), ": a buffer of ", bytes,
                         " bytes is not in the run's memory space"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckBytes(const char* op, const void* p, int64_t bytes) const {
    return Check(op, {{p, 1}}, bytes / ItemSize(DType::kFloat16),
                 DType::kFloat16);
  }

  executor::Communicator* inner_;
  RecordingSpace* space_;
};

class SpaceCheckingProvider : public executor::CommunicatorProvider {
 public:
  SpaceCheckingProvider(executor::CommunicatorProvider* inner,
                        RecordingSpace* space)
      : inner_(inner), space_(space) {}

  absl::StatusOr<executor::Communicator*> Get(const std::vector<int64_t>& ranks,
                                              absl::string_view name) override {
    absl::StatusOr<executor::Communicator*> comm = inner_->Get(ranks, name);
    if (!comm.ok()) return comm;
    std::unique_ptr<SpaceCheckingCommunicator>& wrapped = wrapped_[*comm];
    if (wrapped == nullptr) {
      wrapped = std::make_unique<SpaceCheckingCommunicator>(*comm, space_);
    }
    return wrapped.get();
  }

  absl::Status Drain() override {
    absl::Status s = inner_->Drain();
    if (s.ok()) space_->Drained();
    ++drains_;
    return s;
  }
  int64_t drains() const { return drains_; }

 private:
  executor::CommunicatorProvider* inner_;
  RecordingSpace* space_;
  int64_t drains_ = 0;
  std::map<executor::Communicator*, std::unique_ptr<SpaceCheckingCommunicator>>
      wrapped_;
};

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_EXECUTOR_SPACE_CHECKING_H_
