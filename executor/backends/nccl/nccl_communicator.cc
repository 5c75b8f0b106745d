#include "executor/backends/nccl/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "executor/backends/nccl/collective_watch.h"
#include "executor/backends/nccl/divide_kernel.h"
#include "executor/backends/nccl/group_split.h"
#include "executor/backends/nccl/nccl_available.h"
#include "executor/backends/nccl/pending_collectives.h"

namespace reshard::executor {

// One NCCL communicator, its watchdog over what the host waits for (its
// creation, a split from it, enqueueing a call) and the provider's stream
// its work runs on. `comm` is null once aborted (ncclCommAbort frees it).
struct NcclHandle {
  NcclHandle(absl::Duration timeout, const CancelSignal* cancel,
             NcclStream* stream)
      : watch(timeout), cancel(cancel), stream(stream) {}
  ncclComm_t comm = nullptr;
  CollectiveWatch watch;
  const CancelSignal* cancel;  // the provider's: its run was cancelled
  NcclStream* stream;          // the provider's
  std::string comm_name;       // NCCL's name for it (its logs); outlives config
};

// The provider's one CUDA stream: every communicator's work runs on it in
// call order, so calls on different groups need no host wait between
// them. It is ordered with the caller's stream by events both ways. The
// calls enqueued and not yet seen complete are `pending`, call k's
// completion and communicator being slots[k] (the slots are reused once
// all have retired).
struct NcclStream {
  explicit NcclStream(absl::Duration timeout) : pending(timeout) {}
  ~NcclStream() {
    for (const Slot& slot : slots) cudaEventDestroy(slot.done);
    if (ready != nullptr) cudaEventDestroy(ready);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
  cudaStream_t stream = nullptr;
  cudaStream_t caller = nullptr;  // the caller's stream
  cudaEvent_t ready = nullptr;    // the caller's work before the next call
  PendingCollectives pending;
  struct Slot {
    cudaEvent_t done;    // recorded after the call
    NcclHandle* handle;  // the communicator it runs on
  };
  std::vector<Slot> slots;
  size_t used = 0;                 // slots in use
  std::vector<NcclHandle*> comms;  // every communicator whose work runs here
  int64_t host_waits = 0;
};

namespace {

std::string NcclText(absl::string_view call, ncclResult_t r, ncclComm_t comm) {
  std::string text = absl::StrCat(call, ": ", ncclGetErrorString(r));
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') absl::StrAppend(&text, " (", last, ")");
  return text;
}

std::string CudaText(absl::string_view call, cudaError_t e) {
  return absl::StrCat(call, ": ", cudaGetErrorName(e), " (",
                      cudaGetErrorString(e), ")");
}

// What an NCCL call's return means for the watch: success and
// ncclInProgress (a non-blocking communicator still enqueuing) are polled.
WatchPoll AfterCall(absl::string_view call, ncclResult_t r, ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress) return WatchPoll::InProgress();
  return WatchPoll::Error(NcclText(call, r, comm));
}

// The communicator's own state: in progress while NCCL still creates it or
// enqueues its last call, an error once an asynchronous error occurred.
WatchPoll PollComm(ncclComm_t comm) {
  ncclResult_t async = ncclSuccess;
  const ncclResult_t r = ncclCommGetAsyncError(comm, &async);
  if (r != ncclSuccess) {
    return WatchPoll::Error(NcclText("ncclCommGetAsyncError", r, comm));
  }
  if (async == ncclInProgress) return WatchPoll::InProgress();
  if (async != ncclSuccess) {
    return WatchPoll::Error(NcclText("NCCL asynchronous error", async, comm));
  }
  return WatchPoll::Done();
}

void AbortHandle(NcclHandle& handle) {
  if (handle.comm != nullptr) ncclCommAbort(handle.comm);
  handle.comm = nullptr;
}

// Work queued behind a failed call can never run: every communicator on
// the stream is aborted, and fails later calls fast with `why`.
void AbortAll(NcclStream& work, const absl::Status& why) {
  work.pending.Fail(why);
  for (NcclHandle* handle : work.comms) {
    AbortHandle(*handle);
    handle->watch.Fail(why);
  }
}

// The next call's work waits for what the caller enqueued before it.
WatchPoll OrderAfterCaller(int device, NcclStream& work) {
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaEventRecord(work.ready, work.caller);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(work.stream, work.ready, 0);
  if (e != cudaSuccess) {
    return WatchPoll::Error(CudaText("ordering after the caller's stream", e));
  }
  return WatchPoll::InProgress();
}

// Records call k's completion on the stream and orders the caller's later
// work after it; returns k.
absl::StatusOr<int64_t> RecordCompletion(NcclStream& work, NcclHandle* handle) {
  if (work.used == work.slots.size()) {
    cudaEvent_t event = nullptr;
    const cudaError_t e =
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      return absl::InternalError(CudaText("cudaEventCreateWithFlags", e));
    }
    work.slots.push_back({event, nullptr});
  }
  const size_t k = work.used;
  cudaError_t e = cudaEventRecord(work.slots[k].done, work.stream);
  if (e == cudaSuccess) {
    e = cudaStreamWaitEvent(work.caller, work.slots[k].done, 0);
  }
  if (e != cudaSuccess) {
    return absl::InternalError(CudaText("recording the call's completion", e));
  }
  work.slots[k].handle = handle;
  ++work.used;
  return static_cast<int64_t>(k);
}

// The oldest pending call: failed when its communicator reports an
// asynchronous error, done when its completion event has occurred.
WatchPoll PollOldest(NcclStream& work) {
  const int64_t k = work.pending.oldest();
  WatchPoll p = PollComm(work.slots[k].handle->comm);
  if (p.state != WatchPoll::State::kDone) return p;
  const cudaError_t e = cudaEventQuery(work.slots[k].done);
  if (e == cudaSuccess) return WatchPoll::Done();
  if (e == cudaErrorNotReady) return WatchPoll::InProgress();
  return WatchPoll::Error(CudaText("cudaEventQuery", e));
}

// Between polls: spin (yielding) for the first millisecond, which keeps
// small collectives' latency low, then sleep briefly.
void Pause(absl::Time start) {
  if (absl::Now() - start < absl::Milliseconds(1)) {
    std::this_thread::yield();
  } else {
    absl::SleepFor(absl::Microseconds(50));
  }
}

// Drives `handle`'s watch from `first` (the enqueue's result) until the
// call in flight ends, `poll()` giving each later poll. Aborts the
// communicator when the watch says so.
template <typename Poll>
absl::Status Await(NcclHandle& handle, WatchPoll first, Poll poll) {
  const absl::Time start = absl::Now();
  WatchPoll p = std::move(first);
  while (true) {
    const WatchAction action = handle.cancel->raised()
                                   ? handle.watch.Cancel(handle.cancel->why())
                                   : handle.watch.Observe(p, absl::Now());
    switch (action) {
      case WatchAction::kComplete:
        return absl::OkStatus();
      case WatchAction::kAbort:
        AbortHandle(handle);
        return handle.watch.status();
      case WatchAction::kWait:
        break;
    }
    Pause(start);
    p = poll();
  }
}

ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
  }
  return ncclFloat32;
}

DivideType KernelType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return DivideType::kFloat32;
    case DType::kFloat64:
      return DivideType::kFloat64;
    case DType::kBFloat16:
      return DivideType::kBFloat16;
    case DType::kFloat16:
      return DivideType::kFloat16;
    case DType::kInt32:
      return DivideType::kInt32;
    case DType::kInt64:
      return DivideType::kInt64;
  }
  return DivideType::kFloat32;
}

// avg reduces as a sum; the division follows (docs/DESIGN.md §6.1).
ncclRedOp_t NcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return ncclSum;
  }
  return ncclSum;
}

// The division that follows a reduction: none when `divisor` is 1.
struct Division {
  void* data = nullptr;
  int64_t count = 0;
  int64_t divisor = 1;
  DType dtype = DType::kFloat32;
};

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(NcclHandle* handle, std::string name,
                   std::vector<int64_t> ranks, int index, int device)
      : handle_(handle),
        name_(std::move(name)),
        ranks_(std::move(ranks)),
        index_(index),
        device_(device) {}

  int index() const override { return index_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  const std::string& name() const override { return name_; }

  absl::Status AllGather(const void* in, void* out, int64_t block_numel,
                         DType dtype) override {
    return Call("all_gather", block_numel, {}, [&](ncclComm_t c) {
      return ncclAllGather(in, out, block_numel, NcclType(dtype), c,
                           handle_->stream->stream);
    });
  }

  absl::Status AllReduce(void* data, int64_t block_numel, DType dtype,
                         Reduction reduction) override {
    const Division d{data, block_numel, Divisor(reduction), dtype};
    return Call("all_reduce", block_numel, d, [&](ncclComm_t c) {
      return ncclAllReduce(data, data, block_numel, NcclType(dtype),
                           NcclOp(reduction.op), c, handle_->stream->stream);
    });
  }

  absl::Status ReduceScatter(const void* in, void* out, int64_t block_numel,
                             DType dtype, Reduction reduction) override {
    const Division d{out, block_numel, Divisor(reduction), dtype};
    return Call("reduce_scatter", block_numel, d, [&](ncclComm_t c) {
      return ncclReduceScatter(in, out, block_numel, NcclType(dtype),
                               NcclOp(reduction.op), c,
                               handle_->stream->stream);
    });
  }

  absl::Status AllToAll(const void* in, void* out, int64_t block_numel,
                        DType dtype) override {
    return Call("all_to_all", block_numel, {}, [&](ncclComm_t c) {
      return GroupedSendRecv(static_cast<const char*>(in),
                             static_cast<char*>(out), block_numel, dtype, c);
    });
  }

  absl::Status Send(int peer, const void* data, int64_t bytes) override {
    absl::Status s = CheckPeer("send to", peer);
    if (!s.ok()) return s;
    return Call("send", bytes, {}, [&](ncclComm_t c) {
      return ncclSend(data, static_cast<size_t>(bytes), ncclUint8, peer, c,
                      handle_->stream->stream);
    });
  }

  absl::Status Recv(int peer, void* data, int64_t bytes) override {
    absl::Status s = CheckPeer("receive from", peer);
    if (!s.ok()) return s;
    return Call("recv", bytes, {}, [&](ncclComm_t c) {
      return ncclRecv(data, static_cast<size_t>(bytes), ncclUint8, peer, c,
                      handle_->stream->stream);
    });
  }

  absl::Status Exchange(absl::Span<const PeerMessage> sends,
                        absl::Span<const PeerMessage> recvs) override {
    int64_t bytes = 0;
    for (const auto& [list, what] :
         {std::pair{sends, "send to"}, std::pair{recvs, "receive from"}}) {
      for (const PeerMessage& m : list) {
        if (absl::Status s = CheckPeer(what, m.peer); !s.ok()) return s;
        bytes += m.bytes;
      }
    }
    return Call("exchange", bytes, {},
                [&](ncclComm_t c) { return GroupedExchange(sends, recvs, c); });
  }

 private:
  int64_t Divisor(Reduction r) const { return DivisorOf(r, size()); }

  ncclResult_t GroupedSendRecv(const char* in, char* out, int64_t block_numel,
                               DType dtype, ncclComm_t c);
  ncclResult_t GroupedExchange(absl::Span<const PeerMessage> sends,
                               absl::Span<const PeerMessage> recvs,
                               ncclComm_t c);
  absl::Status FollowEnqueue(const char* op, const Division& division);

  // Begins `op` on the watch, enqueues it with `enqueue(comm)` after the
  // caller's work and polls until NCCL has enqueued it; then queues its
  // division and its completion, which the provider's Drain waits for.
  // Empty blocks move nothing. A failure aborts every communicator.
  template <typename Enqueue>
  absl::Status Call(const char* op, int64_t block_numel, Division division,
                    Enqueue enqueue) {
    if (block_numel == 0) return absl::OkStatus();
    absl::Status s = handle_->watch.Begin(op, name_, absl::Now());
    if (!s.ok()) return s;
    NcclStream& work = *handle_->stream;
    WatchPoll first = OrderAfterCaller(device_, work);
    if (first.state != WatchPoll::State::kError) {
      // Enqueued already (ncclSuccess): the communicator's state at once,
      // without a pause first.
      const ncclResult_t r = enqueue(handle_->comm);
      first = r == ncclSuccess ? PollComm(handle_->comm)
                               : AfterCall(op, r, handle_->comm);
    }
    s = Await(*handle_, std::move(first),
              [this] { return PollComm(handle_->comm); });
    if (s.ok()) s = FollowEnqueue(op, division);
    if (!s.ok()) AbortAll(work, s);
    return s;
  }

  NcclHandle* handle_;  // owned by the provider
  std::string name_;
  std::vector<int64_t> ranks_;
  int index_;
  int device_;
};

// all_to_all as one group of point-to-point calls: block j of `in` to
// member j, block i of `out` from member i (this member included).
ncclResult_t NcclCommunicator::GroupedSendRecv(const char* in, char* out,
                                               int64_t block_numel, DType dtype,
                                               ncclComm_t c) {
  const int64_t bytes = block_numel * ItemSize(dtype);
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return r;
  ncclResult_t first_error = ncclSuccess;
  for (int j = 0; j < size(); ++j) {
    for (ncclResult_t q :
         {ncclSend(in + j * bytes, block_numel, NcclType(dtype), j, c,
                   handle_->stream->stream),
          ncclRecv(out + j * bytes, block_numel, NcclType(dtype), j, c,
                   handle_->stream->stream)}) {
      if (q != ncclSuccess && first_error == ncclSuccess) first_error = q;
    }
  }
  r = ncclGroupEnd();  // closes the group even after an error
  return first_error != ncclSuccess ? first_error : r;
}

// An exchange as one group of point-to-point calls.
ncclResult_t NcclCommunicator::GroupedExchange(
    absl::Span<const PeerMessage> sends, absl::Span<const PeerMessage> recvs,
    ncclComm_t c) {
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return r;
  ncclResult_t first_error = ncclSuccess;
  for (const PeerMessage& m : recvs) {
    const ncclResult_t q =
        ncclRecv(m.data, static_cast<size_t>(m.bytes), ncclUint8, m.peer, c,
                 handle_->stream->stream);
    if (q != ncclSuccess && first_error == ncclSuccess) first_error = q;
  }
  for (const PeerMessage& m : sends) {
    const ncclResult_t q =
        ncclSend(m.data, static_cast<size_t>(m.bytes), ncclUint8, m.peer, c,
                 handle_->stream->stream);
    if (q != ncclSuccess && first_error == ncclSuccess) first_error = q;
  }
  r = ncclGroupEnd();  // closes the group even after an error
  return first_error != ncclSuccess ? first_error : r;
}

// After NCCL enqueued `op`: the avg division (which must follow it on the
// stream), then the call's completion, pending until the provider drains.
absl::Status NcclCommunicator::FollowEnqueue(const char* op,
                                             const Division& division) {
  NcclStream& work = *handle_->stream;
  if (division.divisor != 1) {
    const cudaError_t e =
        LaunchDivide(KernelType(division.dtype), division.data, division.count,
                     division.divisor, work.stream);
    if (e != cudaSuccess) {
      return absl::InternalError(absl::StrCat(
          op, " on group ", name_, ": ", CudaText("avg division kernel", e),
          "; communicator aborted"));
    }
  }
  absl::StatusOr<int64_t> k = RecordCompletion(work, handle_);
  if (!k.ok()) {
    return absl::InternalError(absl::StrCat(op, " on group ", name_, ": ",
                                            k.status().message(),
                                            "; communicator aborted"));
  }
  return work.pending.Add(op, name_, *k, absl::Now());
}

// Finalizes `handle`'s communicator within `timeout` and destroys it, or
// aborts it (also when `abort` is set: an earlier one did not finish).
// Returns whether it finished.
bool Release(NcclHandle& handle, absl::Duration timeout, bool abort) {
  bool finished = !abort;
  if (handle.comm != nullptr && !abort) {
    const absl::Time deadline = absl::Now() + timeout;
    const absl::Time start = absl::Now();
    ncclResult_t r = ncclCommFinalize(handle.comm);
    WatchPoll p = AfterCall("ncclCommFinalize", r, handle.comm);
    while (p.state == WatchPoll::State::kInProgress && absl::Now() < deadline) {
      Pause(start);
      p = PollComm(handle.comm);
    }
    finished = p.state == WatchPoll::State::kDone;
    if (finished) {
      ncclCommDestroy(handle.comm);
      handle.comm = nullptr;
    }
  }
  AbortHandle(handle);
  return finished;
}

}  // namespace

NcclCommunicatorProvider::NcclCommunicatorProvider(
    std::shared_ptr<KeyValueStore> store, std::string prefix, int64_t rank,
    int64_t world_size, NcclOptions options)
    : store_(std::move(store)),
      prefix_(std::move(prefix)),
      rank_(rank),
      world_size_(world_size),
      options_(options) {}

NcclCommunicatorProvider::~NcclCommunicatorProvider() {
  groups_.clear();
  if (device_ >= 0) cudaSetDevice(device_);
  const absl::Duration timeout = absl::FromChrono(options_.timeout);
  bool abort = false;
  for (auto& [ranks, handle] : splits_) {
    abort = !Release(*handle, timeout, abort) || abort;
  }
  if (world_ != nullptr) Release(*world_, timeout, abort);
  stream_.reset();
}

// The provider's stream and its ordering event, on the current device.
absl::Status NcclCommunicatorProvider::CreateStream() {
  if (stream_ != nullptr) return absl::OkStatus();
  auto work = std::make_unique<NcclStream>(absl::FromChrono(options_.timeout));
  cudaError_t e = cudaStreamCreate(&work->stream);
  if (e == cudaSuccess) {
    e = cudaEventCreateWithFlags(&work->ready, cudaEventDisableTiming);
  }
  if (e != cudaSuccess) {
    return absl::InternalError(CudaText("creating the provider's stream", e));
  }
  work->caller =
      options_.stream != nullptr ? options_.stream : cudaStreamLegacy;
  stream_ = std::move(work);
  return absl::OkStatus();
}

// The run's one wait: polls the oldest pending call (its communicator's
// asynchronous error, its completion event) until none is left, each
// within its timeout; a failure or a cancel aborts every communicator.
absl::Status NcclCommunicatorProvider::Drain() {
  if (stream_ == nullptr) return absl::OkStatus();
  NcclStream& work = *stream_;
  if (work.pending.empty()) return work.pending.status();
  ++work.host_waits;
  const cudaError_t e = cudaSetDevice(device_);
  if (e != cudaSuccess) {
    AbortAll(work, absl::InternalError(CudaText("cudaSetDevice", e)));
    return work.pending.status();
  }
  const absl::Time start = absl::Now();
  while (true) {
    const WatchAction action =
        cancel_.raised() ? work.pending.Cancel(cancel_.why())
                         : work.pending.Observe(PollOldest(work), absl::Now());
    switch (action) {
      case WatchAction::kComplete:
        work.used = 0;
        return absl::OkStatus();
      case WatchAction::kAbort:
        AbortAll(work, work.pending.status());
        return work.pending.status();
      case WatchAction::kWait:
        break;
    }
    Pause(start);
  }
}

int64_t NcclCommunicatorProvider::host_waits() const {
  return stream_ == nullptr ? 0 : stream_->host_waits;
}

namespace {

// Rank 0 makes the world's unique id and publishes it under `key`; the
// others wait for it (within `timeout`): a rank 0 that never publishes is
// the store's DEADLINE_EXCEEDED.
absl::StatusOr<ncclUniqueId> ExchangeUniqueId(
    KeyValueStore& store, const std::string& key, int64_t rank,
    std::chrono::milliseconds timeout) {
  ncclUniqueId id;
  if (rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) {
      return absl::InternalError(NcclText("ncclGetUniqueId", r, nullptr));
    }
    absl::Status s =
        store.Set(key, std::string(id.internal, sizeof(id.internal)));
    if (!s.ok()) return s;
    return id;
  }
  absl::StatusOr<std::vector<std::string>> bytes = store.Get({key}, timeout);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat("waiting for rank 0's NCCL unique id: ",
                                     bytes.status().message()));
  }
  const std::string& value = bytes->front();
  if (value.size() != sizeof(id.internal)) {
    return absl::InternalError(
        absl::StrCat("the unique id under ", key, " has ", value.size(),
                     " bytes, expected ", sizeof(id.internal)));
  }
  std::memcpy(id.internal, value.data(), value.size());
  return id;
}

ncclConfig_t NonBlockingConfig(const std::string& comm_name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = comm_name.c_str();
  return config;
}

}  // namespace

// Picks the device, exchanges the unique id and creates the world
// communicator, polled to completion against the timeout. A failed world
// is kept (aborted), so that later calls fail fast with its error.
absl::Status NcclCommunicatorProvider::EnsureWorld() {
  if (world_ != nullptr) {
    if (world_->comm != nullptr) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("the NCCL world communicator was aborted: ",
                     world_->watch.status().message()));
  }
  absl::StatusOr<GpuProbe> gpus = ProbeGpus();
  if (!gpus.ok()) return gpus.status();
  if (gpus->count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no usable GPU (", gpus->detail, ")"));
  }
  if (options_.device >= gpus->count) {
    return absl::InvalidArgumentError(absl::StrCat("device ", options_.device,
                                                   " does not exist (",
                                                   gpus->count, " GPUs)"));
  }
  device_ = options_.device >= 0 ? options_.device
                                 : static_cast<int>(rank_ % gpus->count);
  cudaError_t e = cudaSetDevice(device_);
  if (e != cudaSuccess) {
    return absl::FailedPreconditionError(CudaText("cudaSetDevice", e));
  }
  absl::StatusOr<ncclUniqueId> id =
      ExchangeUniqueId(*store_, absl::StrCat(prefix_, "/nccl/world_id"), rank_,
                       options_.timeout);
  if (!id.ok()) return id.status();
  absl::Status s = CreateStream();
  if (!s.ok()) return s;
  auto handle = std::make_unique<NcclHandle>(absl::FromChrono(options_.timeout),
                                             &cancel_, stream_.get());
  handle->comm_name = absl::StrCat(prefix_, "/world");
  s = handle->watch.Begin("ncclCommInitRankConfig", "world", absl::Now());
  if (!s.ok()) return s;
  ncclConfig_t config = NonBlockingConfig(handle->comm_name);
  const ncclResult_t r =
      ncclCommInitRankConfig(&handle->comm, static_cast<int>(world_size_), *id,
                             static_cast<int>(rank_), &config);
  const WatchPoll first = AfterCall("ncclCommInitRankConfig", r, handle->comm);
  NcclHandle& h = *handle;
  s = Await(h, first, [&h] { return PollComm(h.comm); });
  stream_->comms.push_back(&h);
  world_ = std::move(handle);
  return s;
}

bool NcclCommunicatorProvider::IsWorld(
    const std::vector<int64_t>& ranks) const {
  if (static_cast<int64_t>(ranks.size()) != world_size_) return false;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Splits the group `ranks` off the world communicator (collective over the
// world), polled on the world's watch: both communicators are in progress
// until the split completes, and a split that fails or times out aborts
// both (the world's collective split cannot be resumed).
absl::StatusOr<NcclHandle*> NcclCommunicatorProvider::Split(
    const std::vector<int64_t>& ranks, absl::string_view name) {
  auto known = splits_.find(ranks);
  if (known != splits_.end()) return known->second.get();
  absl::StatusOr<GroupSplit> split = SplitForRanks(ranks, rank_);
  if (!split.ok()) return split.status();
  auto handle = std::make_unique<NcclHandle>(absl::FromChrono(options_.timeout),
                                             &cancel_, stream_.get());
  handle->comm_name = absl::StrCat(prefix_, "/", name);
  absl::Status s = world_->watch.Begin("ncclCommSplit", name, absl::Now());
  if (!s.ok()) {
    Release(*handle, absl::ZeroDuration(), /*abort=*/true);
    return s;
  }
  ncclConfig_t config = NonBlockingConfig(handle->comm_name);
  const ncclResult_t r = ncclCommSplit(world_->comm, split->color, split->key,
                                       &handle->comm, &config);
  NcclHandle& world = *world_;
  NcclHandle& child = *handle;
  s = Await(world, AfterCall("ncclCommSplit", r, world.comm), [&] {
    WatchPoll p = PollComm(world.comm);
    if (p.state != WatchPoll::State::kDone || child.comm == nullptr) return p;
    return PollComm(child.comm);
  });
  if (s.ok() && child.comm == nullptr) {
    s = absl::InternalError(
        absl::StrCat("ncclCommSplit on group ", name, " made no communicator"));
  }
  if (!s.ok()) {
    Release(child, absl::ZeroDuration(), /*abort=*/true);
    return s;
  }
  NcclHandle* raw = handle.get();
  stream_->comms.push_back(raw);
  splits_.emplace(ranks, std::move(handle));
  return raw;
}

absl::StatusOr<Communicator*> NcclCommunicatorProvider::Get(
    const std::vector<int64_t>& ranks, absl::string_view name) {
  auto key = std::make_pair(ranks, std::string(name));
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second.get();
  const std::string label = absl::StrCat("group ", name, " (ranks [",
                                         absl::StrJoin(ranks, ","), "])");
  const auto me = std::find(ranks.begin(), ranks.end(), rank_);
  if (me == ranks.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, " does not contain rank ", rank_));
  }
  for (int64_t r : ranks) {
    if (r < 0 || r >= world_size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          label, ": rank ", r, " is outside the world of ", world_size_));
    }
  }
  absl::Status s = EnsureWorld();
  absl::StatusOr<NcclHandle*> handle = world_.get();
  if (s.ok() && !IsWorld(ranks)) handle = Split(ranks, name);
  if (!s.ok() || !handle.ok()) {
    const absl::Status& failed = s.ok() ? handle.status() : s;
    return absl::Status(failed.code(), absl::StrCat("nccl: connecting ", label,
                                                    ": ", failed.message()));
  }
  auto comm = std::make_unique<NcclCommunicator>(
      *handle, std::string(name), ranks, static_cast<int>(me - ranks.begin()),
      device_);
  Communicator* raw = comm.get();
  groups_.emplace(std::move(key), std::move(comm));
  return raw;
}

}  // namespace reshard::executor
