// A communicator provider with no peers, for measuring one rank's own
// work: each collective leaves the rank's buffers as if every peer had sent
// what this rank sent, so nothing waits and every count is deterministic.
// Results are not what real peers would give.
#ifndef RESHARD_BENCH_LOOPBACK_PROVIDER_H_
#define RESHARD_BENCH_LOOPBACK_PROVIDER_H_

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "executor/run/communicator_provider.h"

namespace reshard::bench {

class LoopbackCommunicator : public executor::Communicator {
 public:
  LoopbackCommunicator(int index, int size, std::string name)
      : index_(index), size_(size), name_(std::move(name)) {}
  int index() const override { return index_; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }

  absl::Status AllGather(const void* in, void* out, int64_t block_numel,
                         DType dtype) override {
    const int64_t bytes = block_numel * ItemSize(dtype);
    for (int j = 0; j < size_; ++j) {
      char* to = static_cast<char*>(out) + j * bytes;
      if (to != in) std::memmove(to, in, bytes);
    }
    return absl::OkStatus();
  }
  absl::Status AllReduce(void*, int64_t, DType, executor::Reduction) override {
    return absl::OkStatus();
  }
  absl::Status ReduceScatter(const void* in, void* out, int64_t block_numel,
                             DType dtype, executor::Reduction) override {
    const int64_t bytes = block_numel * ItemSize(dtype);
    std::memcpy(out, static_cast<const char*>(in) + index_ * bytes, bytes);
    return absl::OkStatus();
  }
  absl::Status AllToAll(const void* in, void* out, int64_t block_numel,
                        DType dtype) override {
    std::memcpy(out, in, block_numel * ItemSize(dtype) * size_);
    return absl::OkStatus();
  }
  // Point-to-point: no peer, so receives keep what their buffers held.
  absl::Status Exchange(absl::Span<const executor::PeerMessage>,
                        absl::Span<const executor::PeerMessage>) override {
    return absl::OkStatus();
  }

 private:
  int index_, size_;
  std::string name_;
};

class LoopbackProvider : public executor::CommunicatorProvider {
 public:
  explicit LoopbackProvider(int64_t rank) : rank_(rank) {}
  absl::StatusOr<executor::Communicator*> Get(const std::vector<int64_t>& ranks,
                                              absl::string_view name) override {
    auto& comm = comms_[ranks];
    if (comm == nullptr) {
      int index = 0;
      while (ranks[index] != rank_) ++index;
      comm = std::make_unique<LoopbackCommunicator>(
          index, static_cast<int>(ranks.size()), std::string(name));
    }
    return comm.get();
  }

 private:
  int64_t rank_;
  std::map<std::vector<int64_t>, std::unique_ptr<LoopbackCommunicator>> comms_;
};

}  // namespace reshard::bench

#endif  // RESHARD_BENCH_LOOPBACK_PROVIDER_H_
