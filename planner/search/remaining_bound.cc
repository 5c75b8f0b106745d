#include "planner/search/remaining_bound.h"

#include <algorithm>
#include <array>
#include <limits>

#include "absl/base/attributes.h"

namespace reshard {

RemainingBound::RemainingBound(const Mesh& mesh, const CostModel& model,
                               FlattenPolicy policy, Memo& memo)
    : ndim_(mesh.ndim()), memo_(memo) {
  const double total =
      static_cast<double>(model.tensor().itemsize() * model.tensor().numel());
  unit_bytes_ = total / static_cast<double>(mesh.world_size());
  local_us_per_byte_ = model.LocalCopyUsPerByte();
  int usable = 0;  // dims of size > 1
  for (int m = 0; m < ndim_; ++m) {
    if (mesh.size(m) > 1) usable |= 1 << m;
  }
  InitGroups(mesh, model, policy, usable);
  const int full = 1 << ndim_;
  size_product_.assign(full, 1.0);
  for (int mask = 1; mask < full; ++mask) {
    const int low = __builtin_ctz(mask);
    size_product_[mask] =
        size_product_[mask & (mask - 1)] * static_cast<double>(mesh.size(low));
  }
  InitCoverCounts(usable);
  ResetMemo();
}

void RemainingBound::InitGroups(const Mesh& mesh, const CostModel& model,
                                FlattenPolicy policy, int usable) {
  // Each usable group once, as the set of its dims of size > 1.
  std::vector<int> masks;
  for (int m = 0; m < ndim_; ++m) {
    if (usable & (1 << m)) masks.push_back(1 << m);
  }
  // Under kAny the groups are distinct sets of >= 2 dims of size > 1, so
  // only registered groups need the duplicate check.
  const bool distinct = policy == FlattenPolicy::kAny;
  ForEachAllowedMultiDimGroup(
      mesh, policy, [&](absl::Span<const int>, int dims_mask) {
        const int mask = dims_mask & usable;
        if (mask != 0 && (distinct || std::find(masks.begin(), masks.end(),
                                                mask) == masks.end())) {
          masks.push_back(mask);
        }
      });
  group_of_mask_.assign(size_t{1} << ndim_, -1);
  for (int mask : masks) {
    Group g;
    for (int m = 0; m < ndim_; ++m) {
      if (mask & (1 << m)) g.push_back(m);
    }
    group_of_mask_[mask] = static_cast<int>(groups_.size());
    groups_.push_back(
        {mask, static_cast<double>(mesh.GroupSize(g)), model.LowerBound(g)});
  }
}

bool RemainingBound::NoDearer(const GroupBound& g, const GroupBound& h) {
  const CostModel::CollectiveBound& a = g.bound;
  const CostModel::CollectiveBound& b = h.bound;
  return g.size <= h.size && a.base_us <= b.base_us && a.hop_us <= b.hop_us &&
         a.us_per_byte <= b.us_per_byte && a.all_to_all_us <= b.all_to_all_us &&
         a.all_to_all_us_per_byte <= b.all_to_all_us_per_byte;
}

void RemainingBound::InitCoverCounts(int usable) {
  const int full = 1 << ndim_;
  cover_count_.assign(full, kUncoverable);
  cover_count_[0] = 0;
  for (int mask = 1; mask < full; ++mask) {
    if ((mask & usable) != mask) continue;
    const int low = mask & -mask;  // some group must cover the lowest dim
    for (const GroupBound& g : groups_) {
      if (!(g.mask & low)) continue;
      cover_count_[mask] =
          std::min(cover_count_[mask], 1 + cover_count_[mask & ~g.mask]);
    }
  }
}

void RemainingBound::ResetMemo() {
  for (uint32_t d : memo_.touched) memo_.dense[d] = -1;
  memo_.touched.clear();
  memo_.sparse.clear();
  if (ndim_ <= kDenseDims) {
    const size_t vectors = size_t{1} << (3 * ndim_);
    if (memo_.dense.size() < vectors) memo_.dense.assign(vectors, -1.0);
  }
}

std::pair<double, int> RemainingBound::Of(const DistState& s,
                                          const DistState& dst) {
  uint32_t demand = 0;
  int needing = 0;
  // Dims that are P and must end so: untouched for good (kDone), or
  // their first collective comes (kFirst; kTwo for a non-sum op, which
  // only R can turn back into). Resolved here, outside the memo.
  int kept_partial[kMaxMeshDims];
  uint32_t touched[kMaxMeshDims];
  int kept = 0;
  for (int m = 0; m < ndim_; ++m) {
    const Placement& p = s.placement(m);
    if (p.is_partial() && p == dst.placement(m) && size_product_[1 << m] > 1) {
      kept_partial[kept] = m;
      touched[kept++] = p.op() == ReduceOp::kSum ? kFirst : kTwo;
      continue;
    }
    const uint32_t d = DemandOf(s, dst, m);
    demand |= d << (3 * m);
    if (d != kNone && d != kMaybe && d != kLocalSum) needing |= 1 << m;
  }
  double cost = std::numeric_limits<double>::infinity();
  for (int choice = 0; choice < (1 << kept); ++choice) {
    uint32_t d = demand;
    for (int i = 0; i < kept; ++i) {
      d = SetField(d, kept_partial[i],
                   (choice & (1 << i)) ? touched[i] : uint32_t{kDone});
    }
    cost = std::min(cost, Cost(d));
  }
  return {cost, cover_count_[needing]};
}

// Assumes size-1 dims are R (canonical states).
uint32_t RemainingBound::DemandOf(const DistState& s, const DistState& dst,
                                  int m) {
  const Placement& p = s.placement(m);
  const Placement& q = dst.placement(m);
  const bool ends_through_r =
      q.is_replicate() || (q.is_partial() && q.op() != ReduceOp::kSum);
  if (p.is_partial()) {
    if (p == q) return kNone;
    return ends_through_r ? kTwo : kFirst;
  }
  if (q == Placement::Partial(ReduceOp::kSum)) return kLocalSum;
  if (p.is_replicate()) return ends_through_r ? kMaybe : kNone;
  if (q.is_shard()) {
    return p == q && s.order_index(m) == dst.order_index(m) ? kNone : kOne;
  }
  return kFinal;  // R, or a non-sum P reached through R
}

double RemainingBound::Cost(uint32_t demand) {
  if (demand == 0) return 0;
  double* memo = nullptr;
  if (ndim_ <= kDenseDims) {
    memo = &memo_.dense[demand];
    if (*memo >= 0) return *memo;
  } else if (auto it = memo_.sparse.find(demand); it != memo_.sparse.end()) {
    return it->second;
  }
  const double best = Schedule(demand);
  if (memo != nullptr) {
    memo_.touched.push_back(demand);
    *memo = best;
  } else {
    memo_.sparse[demand] = best;
  }
  return best;
}

// The helpers of Schedule are forced inline: they run for every demand
// vector of every search (small searches are mostly this dynamic program),
// and as calls they cost 20% more instructions there.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline RemainingBound::DimSets
RemainingBound::Classify(uint32_t demand) const {
  std::array<int, 8> by_demand{};  // mesh dims by their demand
  for (int m = 0; m < ndim_; ++m) by_demand[Field(demand, m)] |= 1 << m;
  DimSets sets;
  sets.one = by_demand[kOne];
  sets.final = by_demand[kFinal];
  sets.two = by_demand[kTwo];
  sets.pending = by_demand[kTwo] | by_demand[kFirst];
  sets.done = by_demand[kDone];
  sets.local = by_demand[kLocalSum];
  return sets;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t RemainingBound::Meet(
    uint32_t demand, int served, uint32_t two_to) {
  for (int rest = served; rest != 0; rest &= rest - 1) {
    const int m = __builtin_ctz(rest);
    const uint32_t f = Field(demand, m);
    demand = SetField(demand, m,
                      f == kTwo     ? two_to
                      : f == kFinal ? uint32_t{kDone}
                                    : uint32_t{kNone});
  }
  return demand;
}

// `event` then the cheapest schedule from `child`, when that can beat
// `best`: a child's schedule costs >= 0, so one whose event alone does not
// is never computed (exact minima, fewer demand vectors visited).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RemainingBound::Consider(
    double event, uint32_t child, double& best) {
  if (event < best) best = std::min(best, event + Cost(child));
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RemainingBound::LocalStepFirst(
    uint32_t demand, const DimSets& sets, double& best) {
  for (int m = 0; m < ndim_; ++m) {
    if (!(sets.local & (1 << m))) continue;
    // partition writes its (unsplit) input's size, shard_to_partial an
    // output that the dim no longer splits.
    const double bytes =
        unit_bytes_ * size_product_[(sets.pending | sets.done) | (1 << m)];
    Consider(bytes * local_us_per_byte_ * kCostBoundSlack,
             SetField(demand, m, kDone), best);
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RemainingBound::CollectiveFirst(
    uint32_t demand, const DimSets& sets, const GroupBound& g, double& best) {
  const int one = sets.one, final = sets.final, pending = sets.pending;
  if ((g.mask & pending) == 0) {
    // all_to_all / all_gather: the group is S, every P dim outside.
    const double outside = unit_bytes_ * size_product_[pending | sets.done];
    if (const int served = g.mask & one) {
      Consider(g.bound.AllToAllTime(outside), Meet(demand, served, kNone),
               best);
    }
    if (const int served = g.mask & (one | final)) {
      Consider(g.bound.Time(g.size * outside, 1), Meet(demand, served, kNone),
               best);
    }
  }
  // reduce_scatter / all_reduce: the group is P (dims without a demand may
  // have been made P locally).
  const double bytes =
      unit_bytes_ * g.size * size_product_[(pending | sets.done) & ~g.mask];
  if (const int served = g.mask & (one | pending)) {
    Consider(g.bound.Time(bytes, 1), Meet(demand, served, kFinal), best);
  }
  if (const int served = g.mask & (one | final | pending)) {
    const double all_reduce = g.bound.Time(bytes, 2);
    Consider(all_reduce, Meet(demand, served, kDone), best);
    if (served & sets.two) {  // not its last collective after all
      Consider(all_reduce, Meet(demand, served, kFinal), best);
    }
  }
}

double RemainingBound::Schedule(uint32_t demand) {
  for (int m = 0; m < ndim_; ++m) {
    if (Field(demand, m) == kMaybe) {
      // Untouched for good, or finally gathered.
      return std::min(Cost(SetField(demand, m, kDone)),
                      Cost(SetField(demand, m, kFinal)));
    }
  }
  const DimSets sets = Classify(demand);
  if ((sets.one | sets.final | sets.pending | sets.local) == 0) return 0;
  double best = std::numeric_limits<double>::infinity();
  LocalStepFirst(demand, sets, best);
  const int demanding = sets.one | sets.final | sets.pending;
  for (const GroupBound& g : groups_) {
    if (g.mask & sets.done) continue;  // nothing touches a dim after its last
    // The group's dims without a demand change no event's outcome, only
    // its price: a usable group of just its demanding dims that is no
    // dearer leads to the same demand for no more.
    const int served = g.mask & demanding;
    if (served == 0) continue;
    if (served != g.mask) {
      const int sub = group_of_mask_[served];
      if (sub >= 0 && NoDearer(groups_[sub], g)) continue;
    }
    CollectiveFirst(demand, sets, g, best);
  }
  return best;
}

}  // namespace reshard
