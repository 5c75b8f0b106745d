// A DistState is where a tensor lives on a mesh: one Placement per mesh dim
// plus the shard order, i.e. for every sharded tensor dim the ordered list of
// mesh dims that split it (first = outermost split).
//
// The order is stored as each sharded mesh dim's index within its tensor
// dim's list (PyTorch's `[k]` suffix), so a state is a fixed-size value that
// is cheap to copy, compare and hash. Invariant: for every tensor dim d the
// indices of the mesh dims with S(d) are exactly 0..k-1.
#ifndef RESHARD_PLANNER_CORE_DIST_STATE_H_
#define RESHARD_PLANNER_CORE_DIST_STATE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/core/mesh.h"
#include "planner/core/placement.h"

namespace reshard {

inline constexpr int kMaxTensorRank = 64;

// One entry of an explicit shard order: `mesh_dims` split `tensor_dim`, in
// that order.
struct ShardOrderEntry {
  int tensor_dim = 0;
  std::vector<int> mesh_dims;
  bool operator==(const ShardOrderEntry&) const = default;
};

// Valid states come from Create (validated), Replicated, parsing
// (state_text.h) or Apply (step.h); a valid state stays valid under Apply.
class DistState {
 public:
  // A placeholder of zero mesh dims, which no mesh accepts: only a target
  // for assignment (records, containers, Plan fields), never planned from.
  DistState() = default;

  // All-Replicate state on a mesh of `mesh_ndim` dims.
  static DistState Replicated(int mesh_ndim);

  // Validates placements against `tensor_rank` and an optional explicit
  // order (empty = ascending mesh dims per tensor dim). `field` prefixes
  // error messages ("src"). Negative shard dims must already be normalized.
  static absl::StatusOr<DistState> Create(
      absl::Span<const Placement> placements,
      absl::Span<const ShardOrderEntry> order, int tensor_rank,
      absl::string_view field);

  int mesh_ndim() const { return ndim_; }
  const Placement& placement(int mesh_dim) const {
    return placements_[mesh_dim];
  }
  std::vector<Placement> placements() const {
    return {placements_.begin(), placements_.begin() + ndim_};
  }
  // Index of a sharded mesh dim within its tensor dim's order.
  int order_index(int mesh_dim) const { return order_[mesh_dim]; }

  // Mesh dims sharding `tensor_dim`, outermost first.
  std::vector<int> ShardOrder(int tensor_dim) const;
  // Number of mesh dims sharding `tensor_dim`.
  int ShardDepth(int tensor_dim) const;
  // The full explicit order, entries sorted by tensor dim.
  std::vector<ShardOrderEntry> ShardOrderEntries() const;
  // True when every tensor dim's order is ascending (PyTorch's default).
  bool HasDefaultOrder() const;
  // Product of the mesh sizes of sharded mesh dims.
  int64_t NumShards(const Mesh& mesh) const;
  // True when the Partial ops present may coexist: all equal, or exactly
  // {sum, avg}.
  bool HasAllowedPartialMix() const;

  // In-place mutators for the planners' inner loops (searches build
  // millions of states; value-returning forms would copy each one once per
  // changed dim). Each keeps the shard order invariant; the caller owns the
  // rest of validity: `mesh_dim` < mesh_ndim(), `tensor_dim` within the
  // tensor's rank, and an allowed Partial mix (check HasAllowedPartialMix
  // after SetPartial). Code outside planners goes through Apply, which
  // checks all of it.
  // Makes `mesh_dim` Replicate, removing it from any shard order.
  void SetReplicate(int mesh_dim);
  // Makes `mesh_dim` S(tensor_dim), appended at the end of the order.
  void AppendShard(int mesh_dim, int tensor_dim);
  // Makes `mesh_dim` P(op).
  void SetPartial(int mesh_dim, ReduceOp op);

  // The same state with every size-1 mesh dim replaced by R: two states are
  // equivalent (docs/DESIGN.md §2.3) exactly when their canonical forms are
  // equal.
  DistState Canonical(const Mesh& mesh) const;

  // List form with `[k]` suffixes where a tensor dim has >= 2 mesh dims:
  // "S(0)[1],S(0)[0],R".
  std::string ToString() const;
  // PyTorch's concatenated form: "S(0)[1]S(0)[0]R".
  std::string ToTorchString() const;

  friend bool operator==(const DistState& a, const DistState& b) {
    return a.ndim_ == b.ndim_ && a.placements_ == b.placements_ &&
           a.order_ == b.order_;
  }
  friend bool operator!=(const DistState& a, const DistState& b) {
    return !(a == b);
  }
  // An exact 128-bit code (16 bits per mesh dim): for states of the same
  // mesh, equal codes mean equal states. Searches key their tables by it.
  struct Code {
    uint64_t lo = 0;
    uint64_t hi = 0;
    bool operator==(const Code&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Code& c) {
      return H::combine(std::move(h), c.lo, c.hi);
    }
  };
  Code Pack() const {
    Code c;
    for (int m = 0; m < ndim_; ++m) {
      const Placement& p = placements_[m];
      const uint64_t field =
          static_cast<uint64_t>(p.kind()) |
          static_cast<uint64_t>(p.op()) << kOpShift |
          (static_cast<uint64_t>(p.dim()) & kDimMask) << kDimShift |
          (static_cast<uint64_t>(order_[m]) & kOrderMask) << kOrderShift;
      CodeWord(c, m) |= field << FieldShift(m);
    }
    return c;
  }
  // Pack's inverse for a state of `ndim` mesh dims (searches keep codes,
  // 16 bytes against a state's 76, and unpack the few states they expand).
  static DistState Unpack(Code c, int ndim) {
    DistState s;
    s.ndim_ = static_cast<int8_t>(ndim);
    for (int m = 0; m < ndim; ++m) {
      const uint64_t field = CodeWord(c, m) >> FieldShift(m) & kFieldMask;
      switch (static_cast<PlacementKind>(field & kKindMask)) {
        case PlacementKind::kShard:
          s.placements_[m] =
              Placement::Shard(static_cast<int>(field >> kDimShift & kDimMask));
          break;
        case PlacementKind::kPartial:
          s.placements_[m] = Placement::Partial(
              static_cast<ReduceOp>(field >> kOpShift & kOpMask));
          break;
        default:
          break;  // Replicate, as constructed
      }
      s.order_[m] = static_cast<int8_t>(field >> kOrderShift & kOrderMask);
    }
    return s;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DistState& s) {
    return H::combine(std::move(h), s.Pack(), s.ndim_);
  }

 private:
  // Create's second half: shards `placements` in the explicit `order`
  // (validated entry by entry) and sets the Partials.
  absl::Status ApplyExplicitOrder(absl::Span<const Placement> placements,
                                  absl::Span<const ShardOrderEntry> order,
                                  absl::string_view field);
  std::string Format(absl::string_view separator) const;

  // A mesh dim's field of a Code: kind (2 bits), reduce op (2), tensor dim
  // (7, enough for kMaxTensorRank), order index (5); four fields per word.
  static constexpr uint64_t kKindMask = 0x3, kOpMask = 0x3, kDimMask = 0x7f,
                            kOrderMask = 0x1f, kFieldMask = 0xffff;
  static constexpr int kOpShift = 2, kDimShift = 4, kOrderShift = 11,
                       kFieldBits = 16, kFieldsPerWord = 4;
  static uint64_t& CodeWord(Code& c, int m) {
    return m < kFieldsPerWord ? c.lo : c.hi;
  }
  static uint64_t CodeWord(const Code& c, int m) {
    return m < kFieldsPerWord ? c.lo : c.hi;
  }
  static int FieldShift(int m) { return kFieldBits * (m % kFieldsPerWord); }

  int8_t ndim_ = 0;
  std::array<Placement, kMaxMeshDims> placements_{};
  std::array<int8_t, kMaxMeshDims> order_{};  // 0 for non-shard dims.
};

// The mutators and ShardDepth are inline: searches call them for every
// edge they generate.
inline int DistState::ShardDepth(int tensor_dim) const {
  int depth = 0;
  for (int m = 0; m < ndim_; ++m) {
    depth += placements_[m] == Placement::Shard(tensor_dim);
  }
  return depth;
}

inline void DistState::SetReplicate(int mesh_dim) {
  const Placement old = placements_[mesh_dim];
  if (old.is_shard()) {
    for (int m = 0; m < ndim_; ++m) {
      if (placements_[m] == old && order_[m] > order_[mesh_dim]) --order_[m];
    }
  }
  placements_[mesh_dim] = Placement::Replicate();
  order_[mesh_dim] = 0;
}

inline void DistState::AppendShard(int mesh_dim, int tensor_dim) {
  SetReplicate(mesh_dim);
  order_[mesh_dim] = static_cast<int8_t>(ShardDepth(tensor_dim));
  placements_[mesh_dim] = Placement::Shard(tensor_dim);
}

inline void DistState::SetPartial(int mesh_dim, ReduceOp op) {
  SetReplicate(mesh_dim);
  placements_[mesh_dim] = Placement::Partial(op);
}

// The Partial ops present in `a` or `b`, in the order avg, max, min, sum
// (the order in which planners try R -> P(op) steps).
std::vector<ReduceOp> PartialOpsIn(const DistState& a, const DistState& b);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_DIST_STATE_H_
