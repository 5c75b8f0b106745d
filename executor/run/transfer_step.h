// A point-to-point step of a rank's program (docs/DESIGN.md §6.1, §9): a
// box of this rank's source sent to a peer, a box of its result received
// from one, or, when the peer is this rank, a local copy between the two.
// Cross-mesh programs are made of them; within-mesh plans never are.
#ifndef RESHARD_EXECUTOR_RUN_TRANSFER_STEP_H_
#define RESHARD_EXECUTOR_RUN_TRANSFER_STEP_H_

#include <cstdint>

#include "planner/core/local_layout.h"

namespace reshard::executor {

enum class TransferKind {
  kSend,       // `from` of this rank's source to `peer`
  kRecv,       // from `peer` into `to` of this rank's result
  kLocalCopy,  // `from` of the source into `to` of the result; peer is self
};

struct TransferStep {
  TransferKind kind = TransferKind::kSend;
  int64_t peer = 0;  // global rank; this rank's own for a local copy
  Box from;          // in the source's local frame (send, local copy)
  Box to;            // in the result's local frame (receive, local copy)
  bool operator==(const TransferStep&) const = default;
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_TRANSFER_STEP_H_
