#include "planner/placement.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace reshard {

absl::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "sum";
}

std::optional<ReduceOp> ParseReduceOp(absl::string_view name) {
  for (ReduceOp op :
       {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) {
    if (ReduceOpName(op) == name) return op;
  }
  return std::nullopt;
}

absl::StatusOr<int> NormalizeShardDim(int dim, int tensor_rank,
                                      absl::string_view field) {
  if (dim < -tensor_rank || dim >= tensor_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": shard dim ", dim,
                     " out of range for a tensor of rank ", tensor_rank));
  }
  return dim < 0 ? dim + tensor_rank : dim;
}

std::string Placement::ToString() const {
  switch (kind_) {
    case PlacementKind::kShard:
      return absl::StrCat("S(", dim_, ")");
    case PlacementKind::kPartial:
      return absl::StrCat("P(", ReduceOpName(op_), ")");
    case PlacementKind::kReplicate:
      break;
  }
  return "R";
}

std::string Placement::ToRepr() const {
  switch (kind_) {
    case PlacementKind::kShard:
      return absl::StrCat("Shard(dim=", dim_, ")");
    case PlacementKind::kPartial:
      return absl::StrCat("Partial(", ReduceOpName(op_), ")");
    case PlacementKind::kReplicate:
      break;
  }
  return "Replicate()";
}

}  // namespace reshard
