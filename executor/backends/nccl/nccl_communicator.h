// The NCCL backend (docs/DESIGN.md §6.1): communicators on device memory. One
// world communicator per provider (ncclCommInitRankConfig, its unique id passed
// from rank 0 to the others through the caller's rendezvous store), one
// communicator per group split from it (ncclCommSplit, GroupSplit's color
// and key, so its ranks follow the group's order). all_to_all is grouped
// ncclSend/ncclRecv; bfloat16 and float16 use NCCL's native types; avg (and
// {sum,avg} mixes) is an ncclSum followed by an IEEE division kernel.
//
// Buffers are device pointers on this provider's device. Every
// communicator is non-blocking, and every call runs on the provider's one
// stream, in call order: a call returns once NCCL has enqueued it (polled
// against the timeout), ordered after the work the caller queued before it
// on its stream and before what it queues after (CUDA events, no host
// wait). Drain waits for every pending call, the run's one host wait,
// watching the oldest one's progress and its communicator's asynchronous
// error (PendingCollectives). A timeout, an asynchronous error or a cancel
// aborts every communicator (ncclCommAbort) and fails every later call
// fast.
//
// Creating a group is collective over the whole world communicator, not
// only over the group (ncclCommSplit is): every rank must ask for its group
// over the same dims at the same point, as the plan runner does (every rank
// runs the same plan's steps in order). The header is CUDA-free; this
// target is built only when CUDA and NCCL are found.
#ifndef RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_COMMUNICATOR_H_
#define RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_COMMUNICATOR_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "executor/run/cancel_signal.h"
#include "executor/run/communicator_provider.h"
#include "executor/stores/key_value_store.h"

struct CUstream_st;

namespace reshard::executor {

struct NcclOptions {
  std::chrono::milliseconds timeout{30000};  // every call and store wait
  int device = -1;  // the CUDA device; -1: global rank mod the GPU count
  // The stream the caller queues its own work on (its MemorySpace's, a
  // cudaStream_t); null: the legacy default stream.
  CUstream_st* stream = nullptr;
};

struct NcclHandle;  // one NCCL communicator and its watch
struct NcclStream;  // the provider's stream and its pending calls

// Creates and caches this rank's NCCL communicators. `store` is shared by
// every rank of the run (rank 0 publishes the world's unique id there);
// `prefix` keeps runs (and generations) apart. The world communicator is
// created on the first Get. Thread-compatible: one thread at a time (each
// thread of a multi-GPU process owns its own provider).
class NcclCommunicatorProvider : public CommunicatorProvider {
 public:
  NcclCommunicatorProvider(std::shared_ptr<KeyValueStore> store,
                           std::string prefix, int64_t rank, int64_t world_size,
                           NcclOptions options);
  // Finalizes every communicator (aborting those that do not finish within
  // the timeout), groups before the world.
  ~NcclCommunicatorProvider() override;

  // FAILED_PRECONDITION without a usable GPU; the creation's error (naming
  // the group) when the world or the split fails or times out.
  absl::StatusOr<Communicator*> Get(const std::vector<int64_t>& ranks,
                                    absl::string_view name) override;
  // The call in flight (a collective, the world's creation or a split) and
  // every later one end at their next poll with CANCELLED, their
  // communicator aborted (ncclCommAbort), instead of waiting out the
  // timeout for peers that stopped.
  void Cancel(absl::string_view why) override { cancel_.Raise(why); }
  // Waits for every call enqueued so far (see above).
  absl::Status Drain() override;
  // How many times Drain waited for the device (tests: once per run).
  int64_t host_waits() const;

 private:
  absl::Status CreateStream();
  absl::Status EnsureWorld();
  absl::StatusOr<NcclHandle*> Split(const std::vector<int64_t>& ranks,
                                    absl::string_view name);
  bool IsWorld(const std::vector<int64_t>& ranks) const;

  std::shared_ptr<KeyValueStore> store_;
  std::string prefix_;
  int64_t rank_;
  int64_t world_size_;
  NcclOptions options_;
  CancelSignal cancel_;
  int device_ = -1;
  std::unique_ptr<NcclStream> stream_;
  std::unique_ptr<NcclHandle> world_;
  // One NCCL communicator per ordered rank tuple other than the world's
  // (0..n-1), shared by every name the tuple is asked for; one
  // communicator per (tuple, name), so errors name the group asked for.
  std::map<std::vector<int64_t>, std::unique_ptr<NcclHandle>> splits_;
  std::map<std::pair<std::vector<int64_t>, std::string>,
           std::unique_ptr<Communicator>>
      groups_;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_BACKENDS_NCCL_NCCL_COMMUNICATOR_H_
