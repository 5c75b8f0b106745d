// A Communicator is one rank's handle on one group of ranks (docs/DESIGN.md
// §6.1): the four collectives of a plan on padded contiguous blocks, for every
// dtype of docs/DESIGN.md §4. Every call is bounded by the communicator's
// timeout and reports failure as a status naming the op, the group and, where
// the backend knows it, the peer; no call throws or hangs past its timeout.
//
// Buffers are the caller's, in the backend's memory (host memory for Gloo,
// device memory for NCCL) and hold whole blocks of `block_numel` elements:
// `group_size` blocks for the all_gather output, the reduce_scatter input
// and both all_to_all buffers, one block otherwise; block j of a
// multi-block buffer belongs to (comes from, goes to) member j.
//
// A Communicator is used by one thread at a time; calls on it are ordered.
#ifndef RESHARD_EXECUTOR_RUN_COMMUNICATOR_H_
#define RESHARD_EXECUTOR_RUN_COMMUNICATOR_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/core/placement.h"
#include "planner/core/tensor_spec.h"

namespace reshard::executor {

// What reduces: `op` is sum, max, min or avg; a pure avg divides by the
// group size, and a {sum,avg} mix is a sum with `avg_divisor` > 1. Both
// divide after the sum, by IEEE division (docs/DESIGN.md §6.1).
struct Reduction {
  ReduceOp op = ReduceOp::kSum;
  int64_t avg_divisor = 1;
};

// What every element `r` reduces over a group of `group_size` is divided by
// after the sum (1: no division).
inline int64_t DivisorOf(Reduction r, int64_t group_size) {
  return r.op == ReduceOp::kAvg ? group_size * r.avg_divisor : r.avg_divisor;
}

// A contiguous run of bytes, `offset` from the start of a buffer.
struct ByteRun {
  int64_t offset = 0;
  int64_t bytes = 0;
  bool operator==(const ByteRun&) const = default;
};

// Where an all_to_all block is sent from: `runs` of `base`, in order,
// within the `extent` bytes from `base` (the whole buffer they are of, so
// that a backend can register it once for every block it holds).
struct SendBlock {
  const char* base = nullptr;
  int64_t extent = 0;
  absl::Span<const ByteRun> runs;
};

// One message of a point-to-point exchange: `bytes` at `data`, to or from
// member `peer` of the group.
struct PeerMessage {
  int peer = 0;
  void* data = nullptr;  // read, never written, when sent
  int64_t bytes = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  // This member's index in the group, and the group's size.
  virtual int index() const = 0;
  virtual int size() const = 0;
  // The group's name (mesh dim names joined by '_'), used in errors.
  virtual const std::string& name() const = 0;

  // `in` (one block) from every member into `out` (size() blocks). `in`
  // may be `out` + index()·block (in place).
  virtual absl::Status AllGather(const void* in, void* out, int64_t block_numel,
                                 DType dtype) = 0;
  // Reduces `data` (one block) across the group, in place.
  virtual absl::Status AllReduce(void* data, int64_t block_numel, DType dtype,
                                 Reduction reduction) = 0;
  // Reduces `in` (size() blocks) across the group; block index() of the
  // result goes to `out` (one block). `in` is not modified.
  virtual absl::Status ReduceScatter(const void* in, void* out,
                                     int64_t block_numel, DType dtype,
                                     Reduction reduction) = 0;
  // Block j of `in` goes to member j; block i of `out` comes from member i.
  virtual absl::Status AllToAll(const void* in, void* out, int64_t block_numel,
                                DType dtype) = 0;

  // all_to_all of blocks of `block_bytes` that travel as runs
  // (docs/DESIGN.md §6.1): `send(j)`, asked at most once per member j,
  // says where block j's runs are (the caller's input, sent in place, or
  // block j of `scratch`, size() blocks, which the call may have just
  // packed); block i from member i lands in `out` + i·block_bytes as
  // consecutive runs of the sizes `recv(i)` gives (member i's runs for
  // this member, in order). Backends override it to send runs in place
  // and overlap packing with the exchange (SendsRunsInPlace); this default
  // gathers every block (index()'s included) into `scratch`, unless they
  // are the input's consecutive blocks, then calls AllToAll. Every member
  // of a group must use the same one of the two calls for a step.
  virtual absl::Status AllToAllRuns(
      absl::FunctionRef<SendBlock(int)> send,
      absl::FunctionRef<absl::Span<const ByteRun>(int)> recv, void* scratch,
      void* out, int64_t block_bytes);
  // Whether AllToAllRuns sends runs in place: then it asks for block
  // index() last, once every send is on its way, and the caller puts it in
  // `out` itself (no runs returned).
  virtual bool SendsRunsInPlace() const { return false; }

  // Point-to-point (docs/DESIGN.md §6.1): `bytes` of `data` to member
  // `peer` of the group, or from it into `data`. A peer's sends and this
  // member's receives from it pair in call order; `peer` is not index()
  // (a rank copies to itself locally). Bounded by the same timeout;
  // failures name the op, the group and the peer. On NCCL a call returns
  // once enqueued and two members exchanging must post their calls in the
  // same order (a send waits for its receive). Backends without
  // point-to-point say UNIMPLEMENTED.
  virtual absl::Status Send(int peer, const void* data, int64_t bytes);
  virtual absl::Status Recv(int peer, void* data, int64_t bytes);
  // Posts every send and receive at once, then waits for all of them
  // (NCCL: one group): no order among them can deadlock, so peers may list
  // theirs in any order, provided each peer pair's messages of a call are
  // posted in the same call on both ends. At most one message per peer and
  // direction. Failures name the op, the group and the peer.
  virtual absl::Status Exchange(absl::Span<const PeerMessage> sends,
                                absl::Span<const PeerMessage> recvs);

 protected:
  // OK when `peer` is another member of the group; else INVALID_ARGUMENT
  // naming `what` ("send to", "receive from"), the peer and the group: the
  // backends' check before a Send or Recv.
  absl::Status CheckPeer(absl::string_view what, int peer) const;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_COMMUNICATOR_H_
