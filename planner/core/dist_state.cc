#include "planner/core/dist_state.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {

DistState DistState::Replicated(int mesh_ndim) {
  DistState s;
  s.ndim_ = static_cast<int8_t>(mesh_ndim);
  return s;
}

namespace {

// Shard dims within the tensor's rank and an allowed mix of Partial ops.
absl::Status CheckPlacements(absl::Span<const Placement> placements,
                             int tensor_rank, absl::string_view field) {
  std::optional<ReduceOp> partial_op;
  for (size_t m = 0; m < placements.size(); ++m) {
    const Placement& p = placements[m];
    if (p.is_shard() && (p.dim() < 0 || p.dim() >= tensor_rank)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[", m, "]: shard dim ", p.dim(),
                       " out of range for a tensor of rank ", tensor_rank));
    }
    if (p.is_partial()) {
      if (partial_op.has_value() &&
          !PartialOpsCompatible(*partial_op, p.op())) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, "[", m, "]: P(", ReduceOpName(p.op()),
                         ") mixed with P(", ReduceOpName(*partial_op),
                         "); only sum and avg partials may be mixed"));
      }
      partial_op = p.op();
    }
  }
  return absl::OkStatus();
}

// One entry of an explicit order: strictly after the previous tensor dim,
// naming distinct mesh dims that hold S(tensor_dim) and are not `covered`
// by an earlier entry.
absl::Status CheckOrderEntry(absl::Span<const Placement> placements,
                             const ShardOrderEntry& entry, int last_tensor_dim,
                             std::vector<bool>& covered,
                             absl::string_view entry_field) {
  if (entry.tensor_dim <= last_tensor_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat(entry_field, ": tensor dims must be strictly increasing"));
  }
  if (entry.mesh_dims.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(entry_field, ": mesh_dims must not be empty"));
  }
  for (int m : entry.mesh_dims) {
    if (m < 0 || m >= static_cast<int>(placements.size()) ||
        placements[m] != Placement::Shard(entry.tensor_dim)) {
      return absl::InvalidArgumentError(absl::StrCat(entry_field, ": mesh dim ",
                                                     m, " does not hold S(",
                                                     entry.tensor_dim, ")"));
    }
    if (covered[m]) {
      return absl::InvalidArgumentError(
          absl::StrCat(entry_field, ": mesh dim ", m, " is listed twice"));
    }
    covered[m] = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DistState> DistState::Create(
    absl::Span<const Placement> placements,
    absl::Span<const ShardOrderEntry> order, int tensor_rank,
    absl::string_view field) {
  if (placements.empty() || placements.size() > kMaxMeshDims) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": needs 1 to ", kMaxMeshDims, " placements, got ",
                     placements.size()));
  }
  if (absl::Status s = CheckPlacements(placements, tensor_rank, field);
      !s.ok()) {
    return s;
  }
  DistState state = Replicated(static_cast<int>(placements.size()));
  if (order.empty()) {
    for (size_t m = 0; m < placements.size(); ++m) {
      const Placement& p = placements[m];
      if (p.is_shard()) {
        state.AppendShard(static_cast<int>(m), p.dim());
      } else if (p.is_partial()) {
        state.SetPartial(static_cast<int>(m), p.op());
      }
    }
    return state;
  }
  absl::Status s = state.ApplyExplicitOrder(placements, order, field);
  if (!s.ok()) return s;
  return state;
}

absl::Status DistState::ApplyExplicitOrder(
    absl::Span<const Placement> placements,
    absl::Span<const ShardOrderEntry> order, absl::string_view field) {
  std::vector<bool> covered(placements.size(), false);
  int last_tensor_dim = -1;
  for (size_t e = 0; e < order.size(); ++e) {
    const ShardOrderEntry& entry = order[e];
    absl::Status s =
        CheckOrderEntry(placements, entry, last_tensor_dim, covered,
                        absl::StrCat(field, ".shard_order[", e, "]"));
    if (!s.ok()) return s;
    last_tensor_dim = entry.tensor_dim;
    for (int m : entry.mesh_dims) AppendShard(m, entry.tensor_dim);
  }
  for (size_t m = 0; m < placements.size(); ++m) {
    if (placements[m].is_shard() && !covered[m]) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".shard_order: mesh dim ", m, " holds ",
                       placements[m].ToString(), " but is not listed"));
    }
    if (placements[m].is_partial()) {
      SetPartial(static_cast<int>(m), placements[m].op());
    }
  }
  return absl::OkStatus();
}

std::vector<int> DistState::ShardOrder(int tensor_dim) const {
  std::vector<int> dims(ShardDepth(tensor_dim), -1);
  for (int m = 0; m < ndim_; ++m) {
    if (placements_[m] == Placement::Shard(tensor_dim)) dims[order_[m]] = m;
  }
  return dims;
}

std::vector<ShardOrderEntry> DistState::ShardOrderEntries() const {
  std::vector<int> dims;
  for (int m = 0; m < ndim_; ++m) {
    if (placements_[m].is_shard()) dims.push_back(placements_[m].dim());
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  std::vector<ShardOrderEntry> entries;
  for (int d : dims) entries.push_back({d, ShardOrder(d)});
  return entries;
}

bool DistState::HasDefaultOrder() const {
  for (const ShardOrderEntry& e : ShardOrderEntries()) {
    if (!std::is_sorted(e.mesh_dims.begin(), e.mesh_dims.end())) return false;
  }
  return true;
}

int64_t DistState::NumShards(const Mesh& mesh) const {
  int64_t n = 1;
  for (int m = 0; m < ndim_; ++m) {
    if (placements_[m].is_shard()) n *= mesh.size(m);
  }
  return n;
}

bool DistState::HasAllowedPartialMix() const {
  std::optional<ReduceOp> seen;
  for (int m = 0; m < ndim_; ++m) {
    const Placement& p = placements_[m];
    if (!p.is_partial()) continue;
    if (seen.has_value() && !PartialOpsCompatible(*seen, p.op())) return false;
    seen = p.op();
  }
  return true;
}

std::vector<ReduceOp> PartialOpsIn(const DistState& a, const DistState& b) {
  std::vector<ReduceOp> ops;
  for (ReduceOp op :
       {ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kSum}) {
    bool present = false;
    for (const DistState* s : {&a, &b}) {
      for (int m = 0; m < s->mesh_ndim(); ++m) {
        present = present || s->placement(m) == Placement::Partial(op);
      }
    }
    if (present) ops.push_back(op);
  }
  return ops;
}

DistState DistState::Canonical(const Mesh& mesh) const {
  DistState s = *this;
  for (int m = 0; m < ndim_; ++m) {
    if (mesh.size(m) == 1) s.SetReplicate(m);
  }
  return s;
}

std::string DistState::Format(absl::string_view separator) const {
  std::string out;
  for (int m = 0; m < ndim_; ++m) {
    if (m > 0) absl::StrAppend(&out, separator);
    const Placement& p = placements_[m];
    absl::StrAppend(&out, p.ToString());
    if (p.is_shard() && ShardDepth(p.dim()) >= 2) {
      absl::StrAppend(&out, "[", order_[m], "]");
    }
  }
  return out;
}

std::string DistState::ToString() const { return Format(","); }
std::string DistState::ToTorchString() const { return Format(""); }

}  // namespace reshard
