#include "planner/core/placement.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/core/enum_names.h"

namespace reshard {

namespace {

// In the order of ReduceOp's values.
constexpr std::array<absl::string_view, 4> kReduceOpNames = {"sum", "avg",
                                                             "max", "min"};

}  // namespace

absl::string_view ReduceOpName(ReduceOp op) {
  return EnumName(op, kReduceOpNames);
}

std::optional<ReduceOp> ParseReduceOp(absl::string_view name) {
  return ParseEnumName<ReduceOp>(name, kReduceOpNames);
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
