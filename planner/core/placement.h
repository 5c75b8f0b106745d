// A Placement says how a tensor lives along one mesh dim: sharded on a tensor
// dim (`S(d)`), replicated (`R`), or partial with a pending reduction
// (`P(op)`). It is a small value type; Replicate and Shard ignore the unused
// fields so that equality and hashing are exact.
#ifndef RESHARD_PLANNER_CORE_PLACEMENT_H_
#define RESHARD_PLANNER_CORE_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

enum class ReduceOp : uint8_t { kSum, kAvg, kMax, kMin };

// "sum", "avg", "max", "min".
absl::string_view ReduceOpName(ReduceOp op);
std::optional<ReduceOp> ParseReduceOp(absl::string_view name);

enum class PlacementKind : uint8_t { kReplicate, kShard, kPartial };

class Placement {
 public:
  constexpr Placement() = default;
  static constexpr Placement Replicate() { return Placement(); }
  static constexpr Placement Shard(int tensor_dim) {
    return Placement(PlacementKind::kShard, tensor_dim, ReduceOp::kSum);
  }
  static constexpr Placement Partial(ReduceOp op = ReduceOp::kSum) {
    return Placement(PlacementKind::kPartial, 0, op);
  }

  PlacementKind kind() const { return kind_; }
  bool is_replicate() const { return kind_ == PlacementKind::kReplicate; }
  bool is_shard() const { return kind_ == PlacementKind::kShard; }
  bool is_partial() const { return kind_ == PlacementKind::kPartial; }
  // The sharded tensor dim; only meaningful for Shard.
  int dim() const { return dim_; }
  // The pending reduction; only meaningful for Partial.
  ReduceOp op() const { return op_; }

  // "S(0)", "R", "P(sum)".
  std::string ToString() const;
  // PyTorch reprs: "Shard(dim=0)", "Replicate()", "Partial(sum)".
  std::string ToRepr() const;

  friend bool operator==(const Placement& a, const Placement& b) {
    return a.kind_ == b.kind_ && a.dim_ == b.dim_ && a.op_ == b.op_;
  }
  friend bool operator!=(const Placement& a, const Placement& b) {
    return !(a == b);
  }
  template <typename H>
  friend H AbslHashValue(H h, const Placement& p) {
    return H::combine(std::move(h), p.kind_, p.dim_, p.op_);
  }

 private:
  constexpr Placement(PlacementKind kind, int dim, ReduceOp op)
      : kind_(kind), op_(op), dim_(dim) {}

  PlacementKind kind_ = PlacementKind::kReplicate;
  ReduceOp op_ = ReduceOp::kSum;
  int32_t dim_ = 0;
};

// The tensor dim that shard dim `dim` names in a tensor of rank
// `tensor_rank`: negative dims count from the end, as in PyTorch (-1 is the
// last). INVALID_ARGUMENT "`field`: shard dim D out of range for a tensor of
// rank R" outside [-rank, rank).
absl::StatusOr<int> NormalizeShardDim(int dim, int tensor_rank,
                                      absl::string_view field);

// True when the Partial ops {a, b} may coexist in one placement list: equal,
// or exactly {sum, avg} (they commute).
inline bool PartialOpsCompatible(ReduceOp a, ReduceOp b) {
  auto linear = [](ReduceOp op) {
    return op == ReduceOp::kSum || op == ReduceOp::kAvg;
  };
  return a == b || (linear(a) && linear(b));
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_PLACEMENT_H_
