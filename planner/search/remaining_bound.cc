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

std::vector<double> RemainingBound::EnvelopeInputs() const {
  std::vector<double> inputs = {static_cast<double>(ndim_), local_us_per_byte_};
  inputs.insert(inputs.end(), size_product_.begin(), size_product_.end());
  for (const GroupBound& g : groups_) {
    const CostModel::CollectiveBound& b = g.bound;
    inputs.insert(inputs.end(),
                  {static_cast<double>(g.mask), g.size, b.base_us, b.hop_us,
                   b.us_per_byte, b.all_to_all_us, b.all_to_all_us_per_byte});
  }
  return inputs;
}

void RemainingBound::ResetMemo() {
  memo_.sparse.clear();
  envelopes_ = nullptr;
  if (ndim_ > kDenseDims) return;
  const uint64_t now = ++memo_.uses;
  std::vector<double> inputs = EnvelopeInputs();
  Envelopes* oldest = &memo_.envelopes[0];
  for (Envelopes& e : memo_.envelopes) {
    if (e.inputs == inputs && e.lines.size() <= kMaxMemoLines) {
      envelopes_ = &e;
      e.last_used = now;
      return;
    }
    if (e.last_used < oldest->last_used) oldest = &e;
  }
  // A set of groups seen once (a missing group's pricing search) does not
  // evict the envelopes of one in use: it is priced at its own bytes.
  if (oldest->last_used != 0 && now - oldest->last_used < kEnvelopesIdle) {
    return;
  }
  envelopes_ = oldest;
  oldest->inputs = std::move(inputs);
  oldest->packed.assign(size_t{1} << (3 * ndim_), 0);
  oldest->lines.clear();
  oldest->last_used = now;
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
  if (envelopes_ != nullptr) {
    const uint64_t e = Envelope(demand);
    const Line* line = &envelopes_->lines[e >> 8];
    double best = std::numeric_limits<double>::infinity();
    for (uint64_t i = 0; i < (e & 0xff); ++i) {
      best = std::min(best, line[i].fixed + line[i].per_unit * unit_bytes_);
    }
    return best;
  }
  if (auto it = memo_.sparse.find(demand); it != memo_.sparse.end()) {
    return it->second;
  }
  const double best = Schedule(demand);
  memo_.sparse[demand] = best;
  return best;
}

uint64_t RemainingBound::Envelope(uint32_t demand) {
  if (const uint64_t known = envelopes_->packed[demand]; known != 0) {
    return known;
  }
  const Lines lines = ScheduleLines(demand);
  std::vector<Line>& pool = envelopes_->lines;
  const uint64_t e = pool.size() << 8 | lines.size();
  pool.insert(pool.end(), lines.begin(), lines.end());
  envelopes_->packed[demand] = e;
  return e;
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

// Keeps `out` the Pareto-least lines: a line no better in both terms than
// one already there adds nothing to the minimum at any bytes.
void RemainingBound::Consider(Line e, uint32_t child, Lines& out) {
  Lines from;
  if (child == 0) {
    from.push_back({0, 0});
  } else {
    const uint64_t c = Envelope(child);
    const auto first = envelopes_->lines.begin() + (c >> 8);
    from.assign(first, first + (c & 0xff));
  }
  for (const Line& l : from) {
    const Line cand{e.fixed + l.fixed, e.per_unit + l.per_unit};
    bool dominated = false;
    for (const Line& o : out) {
      dominated =
          dominated || (o.fixed <= cand.fixed && o.per_unit <= cand.per_unit);
    }
    if (dominated) continue;
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const Line& o) {
                               return cand.fixed <= o.fixed &&
                                      cand.per_unit <= o.per_unit;
                             }),
              out.end());
    out.push_back(cand);
    if (out.size() > kMaxLines) {
      // Two lines become their pointwise minimum: lower, so still a bound.
      const Line a = out.back();
      out.pop_back();
      out.back() = {std::min(a.fixed, out.back().fixed),
                    std::min(a.per_unit, out.back().per_unit)};
    }
  }
}

template <typename Visit>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RemainingBound::LocalStepFirst(
    uint32_t demand, const DimSets& sets, Visit& visit) {
  for (int m = 0; m < ndim_; ++m) {
    if (!(sets.local & (1 << m))) continue;
    // partition writes its (unsplit) input's size, shard_to_partial an
    // output that the dim no longer splits.
    const double units = size_product_[(sets.pending | sets.done) | (1 << m)];
    visit(Line{0, units * local_us_per_byte_ * kCostBoundSlack},
          SetField(demand, m, kDone));
  }
}

// An event on `g` moving `units` rank-shares of the tensor.
inline RemainingBound::Line LineOf(CostModel::CollectiveBound::Affine a,
                                   double units) {
  return {a.fixed_us, a.us_per_byte * units};
}

template <typename Visit>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void RemainingBound::CollectiveFirst(
    uint32_t demand, const DimSets& sets, const GroupBound& g, Visit& visit) {
  const int one = sets.one, final = sets.final, pending = sets.pending;
  if ((g.mask & pending) == 0) {
    // all_to_all / all_gather: the group is S, every P dim outside.
    const double outside = size_product_[pending | sets.done];
    if (const int served = g.mask & one) {
      visit(LineOf(g.bound.AllToAllTime(), outside),
            Meet(demand, served, kNone));
    }
    if (const int served = g.mask & (one | final)) {
      visit(LineOf(g.bound.Time(1), g.size * outside),
            Meet(demand, served, kNone));
    }
  }
  // reduce_scatter / all_reduce: the group is P (dims without a demand may
  // have been made P locally).
  const double units = g.size * size_product_[(pending | sets.done) & ~g.mask];
  if (const int served = g.mask & (one | pending)) {
    visit(LineOf(g.bound.Time(1), units), Meet(demand, served, kFinal));
  }
  if (const int served = g.mask & (one | final | pending)) {
    const Line all_reduce = LineOf(g.bound.Time(2), units);
    visit(all_reduce, Meet(demand, served, kDone));
    if (served & sets.two) {  // not its last collective after all
      visit(all_reduce, Meet(demand, served, kFinal));
    }
  }
}

template <typename Visit>
void RemainingBound::ForEachFirstEvent(uint32_t demand, Visit visit) {
  const DimSets sets = Classify(demand);
  LocalStepFirst(demand, sets, visit);
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
    CollectiveFirst(demand, sets, g, visit);
  }
}

int RemainingBound::FirstMaybe(uint32_t demand) const {
  for (int m = 0; m < ndim_; ++m) {
    if (Field(demand, m) == kMaybe) return m;
  }
  return -1;
}

RemainingBound::Lines RemainingBound::ScheduleLines(uint32_t demand) {
  Lines out;
  if (const int m = FirstMaybe(demand); m >= 0) {
    // Untouched for good, or finally gathered.
    Consider(Line{0, 0}, SetField(demand, m, kDone), out);
    Consider(Line{0, 0}, SetField(demand, m, kFinal), out);
    return out;
  }
  const DimSets sets = Classify(demand);
  if ((sets.one | sets.final | sets.pending | sets.local) == 0) {
    out.push_back({0, 0});
    return out;
  }
  ForEachFirstEvent(demand,
                    [&](Line e, uint32_t child) { Consider(e, child, out); });
  if (out.empty()) out.push_back({std::numeric_limits<double>::infinity(), 0});
  return out;
}

double RemainingBound::Schedule(uint32_t demand) {
  if (const int m = FirstMaybe(demand); m >= 0) {
    // Untouched for good, or finally gathered.
    return std::min(Cost(SetField(demand, m, kDone)),
                    Cost(SetField(demand, m, kFinal)));
  }
  const DimSets sets = Classify(demand);
  if ((sets.one | sets.final | sets.pending | sets.local) == 0) return 0;
  double best = std::numeric_limits<double>::infinity();
  ForEachFirstEvent(demand, [&](Line e, uint32_t child) {
    Consider(e.fixed + e.per_unit * unit_bytes_, child, best);
  });
  return best;
}

}  // namespace reshard
