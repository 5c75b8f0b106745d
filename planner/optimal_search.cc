#include "planner/optimal_search.h"

#include <algorithm>
#include <array>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/local_layout.h"
#include "planner/state_table.h"

namespace reshard {
namespace {

// Every ordered arrangement of every subset of `dims` with >= 2 elements.
void Arrangements(const Group& dims, std::vector<Group>& out) {
  const int n = static_cast<int>(dims.size());
  for (int mask = 0; mask < (1 << n); ++mask) {
    if (__builtin_popcount(mask) < 2) continue;
    Group g;
    for (int i = 0; i < n; ++i) {
      if (mask & (1 << i)) g.push_back(dims[i]);
    }
    do {
      out.push_back(g);
    } while (std::next_permutation(g.begin(), g.end()));
  }
}

// The out-edges of a state, each a transition and the state it leads to,
// handed to a callback (no edge list is built: searches expand many states).
class EdgeGenerator {
 public:
  EdgeGenerator(const Mesh& mesh, const DistState& src, const DistState& dst,
                int tensor_rank, FlattenPolicy policy)
      : mesh_(mesh),
        dst_(dst),
        tensor_rank_(tensor_rank),
        policy_(policy),
        partial_ops_(PartialOpsIn(src, dst)),
        reduce_groups_(size_t{1} << mesh.ndim()) {}

  // Calls emit(const Transition&, DistState&) for every legal edge out of
  // `s`, in a fixed order; `emit` may move from the state.
  template <typename Emit>
  void Expand(const DistState& s, Emit&& emit) {
    const int ndim = s.mesh_ndim();
    // Effective shard orders (size-1 dims hold no split), outermost first.
    std::array<Group, kMaxMeshDims> eff_storage;
    std::array<int, kMaxMeshDims> eff_dim;
    int eff_count = 0;
    int partial_mask = 0;
    for (int m = 0; m < ndim; ++m) {
      const Placement& p = s.placement(m);
      if (p.is_partial()) partial_mask |= 1 << m;
      if (!p.is_shard() || mesh_.size(m) == 1) continue;
      int slot = 0;
      while (slot < eff_count && eff_dim[slot] != p.dim()) ++slot;
      if (slot == eff_count) {
        eff_dim[eff_count] = p.dim();
        eff_storage[eff_count++].clear();
      }
      eff_storage[slot].push_back(m);
    }
    // Slots in tensor dim order (the order shard_to_partial edges come in).
    for (int i = 1; i < eff_count; ++i) {
      for (int j = i; j > 0 && eff_dim[j - 1] > eff_dim[j]; --j) {
        std::swap(eff_dim[j - 1], eff_dim[j]);
        std::swap(eff_storage[j - 1], eff_storage[j]);
      }
    }
    for (int i = 0; i < eff_count; ++i) {
      Group& order = eff_storage[i];
      std::sort(order.begin(), order.end(), [&](int x, int y) {
        return s.order_index(x) < s.order_index(y);
      });
    }
    // all_gather and all_to_all on every usable suffix of every order, in
    // tensor dim order.
    for (int slot = 0; slot < eff_count; ++slot) {
      const int a = eff_dim[slot];
      const Group& order = eff_storage[slot];
      for (size_t k = 1; k <= order.size(); ++k) {
        Transition t{StepOp::kAllGather, Group(order.end() - k, order.end()), a,
                     std::nullopt};
        if (!Usable(t.group)) continue;
        DistState popped = s;
        for (int m : t.group) popped.SetReplicate(m);
        {
          DistState to = popped;
          emit(t, to);
        }
        t.op = StepOp::kAllToAll;
        for (int b = 0; b < tensor_rank_; ++b) {
          if (b == a) continue;
          DistState to = popped;
          for (int m : t.group) to.AppendShard(m, b);
          t.dst_tensor_dim = b;
          emit(t, to);
        }
      }
    }
    // all_reduce on every usable set of partial dims, reduce_scatter on
    // every usable arrangement.
    for (const ReduceGroup& r : ReduceGroups(s, partial_mask)) {
      Transition t{StepOp::kAllReduce, r.group, std::nullopt, std::nullopt};
      if (r.all_reduce) {
        DistState to = s;
        for (int m : r.group) to.SetReplicate(m);
        emit(t, to);
      }
      t.op = StepOp::kReduceScatter;
      for (int b = 0; b < tensor_rank_; ++b) {
        DistState to = s;
        for (int m : r.group) to.AppendShard(m, b);
        t.dst_tensor_dim = b;
        emit(t, to);
      }
    }
    // Local steps on single dims of size > 1.
    for (int m = 0; m < ndim; ++m) {
      if (mesh_.size(m) == 1 || !s.placement(m).is_replicate()) continue;
      Transition t{StepOp::kChunk, {m}, std::nullopt, std::nullopt};
      for (int b = 0; b < tensor_rank_; ++b) {
        DistState to = s;
        to.AppendShard(m, b);
        t.dst_tensor_dim = b;
        emit(t, to);
      }
      t.op = StepOp::kPartition;
      t.dst_tensor_dim.reset();
      for (ReduceOp op : partial_ops_) {
        DistState to = s;
        to.SetPartial(m, op);
        if (to.HasAllowedPartialMix()) {
          t.target_op = op;
          emit(t, to);
        }
      }
    }
    for (int i = 0; i < eff_count; ++i) {
      const int m = eff_storage[i].back();
      if (dst_.placement(m) != Placement::Partial(ReduceOp::kSum)) continue;
      DistState to = s;
      to.SetPartial(m, ReduceOp::kSum);
      if (to.HasAllowedPartialMix()) {
        emit(Transition{StepOp::kShardToPartial, {m}, eff_dim[i], std::nullopt},
             to);
      }
    }
    // Size-1 dims only ever drop to R (it unblocks partial mixes for free).
    for (int m = 0; m < ndim; ++m) {
      if (mesh_.size(m) > 1 || s.placement(m).is_replicate()) continue;
      DistState to = s;
      to.SetReplicate(m);
      const Placement p = s.placement(m);
      if (p.is_shard()) {
        emit(Transition{StepOp::kAllGather, {m}, p.dim(), std::nullopt}, to);
      } else {
        emit(Transition{StepOp::kAllReduce, {m}, std::nullopt, std::nullopt},
             to);
      }
    }
  }

 private:
  struct ReduceGroup {
    Group group;
    bool all_reduce;  // the set matters for all_reduce, not the order
  };

  bool Usable(const Group& g) const {
    if (g.size() == 1) return true;
    switch (policy_) {
      case FlattenPolicy::kNone:
        return false;
      case FlattenPolicy::kAny:
        return true;
      case FlattenPolicy::kExisting:
        return mesh_.IsRegistered(g);
    }
    return false;
  }

  // The groups a reduction may use from a state whose Partial dims are
  // `partial_mask` (computed once per mask).
  const std::vector<ReduceGroup>& ReduceGroups(const DistState& s,
                                               int partial_mask) {
    std::optional<std::vector<ReduceGroup>>& cached =
        reduce_groups_[partial_mask];
    if (cached.has_value()) return *cached;
    Group partial_dims;
    for (int m = 0; m < s.mesh_ndim(); ++m) {
      if ((partial_mask & (1 << m)) && mesh_.size(m) > 1)
        partial_dims.push_back(m);
    }
    std::vector<Group> groups;
    for (int m : partial_dims) groups.push_back({m});
    if (policy_ == FlattenPolicy::kAny) Arrangements(partial_dims, groups);
    if (policy_ != FlattenPolicy::kNone) {
      // Registered groups may include size-1 dims, which `any` arrangements
      // skip: keep them so that `any` is never worse than `existing`.
      for (const Group& g : mesh_.flattened()) {
        if (std::all_of(g.begin(), g.end(),
                        [&](int m) { return partial_mask & (1 << m); })) {
          groups.push_back(g);
        }
      }
    }
    cached.emplace();
    for (Group& g : groups) {
      const bool all_reduce = policy_ != FlattenPolicy::kAny ||
                              std::is_sorted(g.begin(), g.end()) ||
                              mesh_.IsRegistered(g);
      cached->push_back({std::move(g), all_reduce});
    }
    return *cached;
  }

  const Mesh& mesh_;
  const DistState& dst_;
  int tensor_rank_;
  FlattenPolicy policy_;
  std::vector<ReduceOp> partial_ops_;
  std::vector<std::optional<std::vector<ReduceGroup>>> reduce_groups_;
};

// Lower bounds on what a state still needs (cost and communicating steps).
//
// Every mesh dim (size > 1) gets a demand from its placement now and at the
// end:
//  - kOne: S now, S elsewhere at the end: some collective on it.
//  - kFinal: S now, R (or a non-sum P, reached through R) at the end: its
//    last collective (all_gather or all_reduce) leaves it R.
//  - kFirst: P now, S or P(sum) at the end: its first collective is a
//    reduce_scatter or all_reduce.
//  - kTwo: P now, R (or another non-sum P, reached through R) at the end: a
//    first collective, then (or in the same all_reduce) a last one leaving
//    it R.
//  - kMaybe: R now and R (or a non-sum P) at the end: either no collective
//    ever touches it (it stays unsplit: kDone), or it needs a last one
//    (kFinal).
//  - kLocalSum: R or S now, P(sum) at the end: its last local step
//    (partition or shard_to_partial) leaves it P(sum), unsplit from then on.
//  - P now and the same P at the end: either untouched for good (kDone) or
//    its first collective comes (kFirst, or kTwo for non-sum ops).
// A kFirst/kTwo dim is P until its first collective, and a dim whose last
// collective or local step has happened (kDone) is R or P from then on:
// neither splits the tensor, so every step meanwhile moves their factor
// more bytes. A local step writes at least the bytes of its unsplit side.
// A collective on group G with such dims U outside G moves, per rank, at
// least total*|U|/world bytes (all_to_all) or total*|G|*|U|/world (all_gather
// output, reduce_scatter and all_reduce input). The cheapest time-ordered
// schedule of typed collectives that meets every demand bounds the
// remaining cost from below: a dynamic program over demand vectors (3 bits
// per mesh dim), memoized per search. The smallest cover of the demanding
// dims bounds the remaining communicating steps.
//
// The bound is admissible but not consistent (a dim that became kDone reads
// as kMaybe in the next state), so the search reopens states it reaches
// more cheaply later.
class RemainingBound {
 public:
  enum Demand : uint32_t {
    kNone = 0,
    kOne = 1,
    kFinal = 2,
    kFirst = 3,
    kTwo = 4,
    kMaybe = 5,
    kDone = 6,
    kLocalSum = 7,
  };

  // Memoized costs of demand vectors, reset per search in time proportional
  // to what the search used (dense up to 5 mesh dims, hashed beyond).
  struct Memo {
    std::vector<double> dense;  // by demand vector; < 0: not computed
    std::vector<uint32_t> touched;
    absl::flat_hash_map<uint32_t, double> sparse;
  };

  RemainingBound(const Mesh& mesh, const CostModel& model, FlattenPolicy policy,
                 Memo& memo)
      : ndim_(mesh.ndim()), memo_(memo) {
    const double total =
        static_cast<double>(model.tensor().itemsize() * model.tensor().numel());
    unit_bytes_ = total / static_cast<double>(mesh.world_size());
    local_us_per_byte_ = model.LocalCopyUsPerByte();
    int usable = 0;  // dims of size > 1
    for (int m = 0; m < ndim_; ++m) {
      if (mesh.size(m) > 1) usable |= 1 << m;
    }
    std::vector<int> masks;
    for (int m = 0; m < ndim_; ++m) {
      if (usable & (1 << m)) masks.push_back(1 << m);
    }
    if (policy == FlattenPolicy::kAny) {
      for (int mask = 1; mask < (1 << ndim_); ++mask) {
        if ((mask & usable) == mask && __builtin_popcount(mask) >= 2) {
          masks.push_back(mask);
        }
      }
    } else if (policy == FlattenPolicy::kExisting) {
      for (const Group& g : mesh.flattened()) {
        int mask = 0;
        for (int m : g) mask |= mesh.size(m) > 1 ? 1 << m : 0;
        if (mask != 0 &&
            std::find(masks.begin(), masks.end(), mask) == masks.end()) {
          masks.push_back(mask);
        }
      }
    }
    for (int mask : masks) {
      Group g;
      for (int m = 0; m < ndim_; ++m) {
        if (mask & (1 << m)) g.push_back(m);
      }
      const CostModel::BoundTerms terms = model.LowerBoundTerms(g);
      groups_.push_back({mask, static_cast<double>(mesh.GroupSize(g)),
                         terms.hop_us, terms.us_per_byte});
    }
    const int full = 1 << ndim_;
    size_product_.assign(full, 1.0);
    for (int mask = 1; mask < full; ++mask) {
      const int low = __builtin_ctz(mask);
      size_product_[mask] = size_product_[mask & (mask - 1)] *
                            static_cast<double>(mesh.size(low));
    }
    cover_count_.assign(full, 1 << 20);
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
    for (uint32_t d : memo_.touched) memo_.dense[d] = -1;
    memo_.touched.clear();
    memo_.sparse.clear();
    if (ndim_ <= kDenseDims) {
      const size_t vectors = size_t{1} << (3 * ndim_);
      if (memo_.dense.size() < vectors) memo_.dense.assign(vectors, -1.0);
    }
  }

  // {cost bound, communicating-step bound} from `s` to `dst`, both
  // canonical.
  std::pair<double, int> Of(const DistState& s, const DistState& dst) {
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
      if (p.is_partial() && p == dst.placement(m) &&
          size_product_[1 << m] > 1) {
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

 private:
  static constexpr int kDenseDims = 5;

  struct GroupBound {
    int mask;  // mesh dims of size > 1
    double size;
    double hop_us;
    double us_per_byte;
  };

  // Assumes size-1 dims are R (canonical states).
  static uint32_t DemandOf(const DistState& s, const DistState& dst, int m) {
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

  double Bound(const GroupBound& g, double bytes, int rounds) const {
    return (kBaseLatencyUs + rounds * (g.hop_us + bytes * g.us_per_byte)) *
           (1 - 1e-9);
  }

  static uint32_t Field(uint32_t demand, int m) {
    return (demand >> (3 * m)) & 7;
  }
  static uint32_t SetField(uint32_t demand, int m, uint32_t value) {
    return (demand & ~(7u << (3 * m))) | value << (3 * m);
  }

  // The cheapest time-ordered schedule of typed collectives meeting
  // `demand`; every event meets at least one demand.
  double Cost(uint32_t demand) {
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

  double Schedule(uint32_t demand) {
    int one = 0, final = 0, pending = 0, done = 0, two = 0, local = 0;
    for (int m = 0; m < ndim_; ++m) {
      switch (Field(demand, m)) {
        case kOne:
          one |= 1 << m;
          break;
        case kFinal:
          final |= 1 << m;
          break;
        case kTwo:
          two |= 1 << m;
          pending |= 1 << m;
          break;
        case kFirst:
          pending |= 1 << m;
          break;
        case kDone:
          done |= 1 << m;
          break;
        case kLocalSum:
          local |= 1 << m;
          break;
        case kMaybe:
          // Untouched for good, or finally gathered.
          return std::min(Cost(SetField(demand, m, kDone)),
                          Cost(SetField(demand, m, kFinal)));
        default:
          break;
      }
    }
    if ((one | final | pending | local) == 0) return 0;
    // `demand` with `served` dims met: kTwo -> `two_to`, kFinal -> kDone,
    // the rest -> kNone.
    auto meet = [&](int served, uint32_t two_to) {
      uint32_t d = demand;
      for (int m = 0; m < ndim_; ++m) {
        if (!(served & (1 << m))) continue;
        const uint32_t f = Field(d, m);
        d = SetField(d, m,
                     f == kTwo     ? two_to
                     : f == kFinal ? uint32_t{kDone}
                                   : uint32_t{kNone});
      }
      return d;
    };
    double best = std::numeric_limits<double>::infinity();
    for (int m = 0; m < ndim_; ++m) {
      if (!(local & (1 << m))) continue;
      // partition writes its (unsplit) input's size, shard_to_partial an
      // output that the dim no longer splits.
      const double bytes =
          unit_bytes_ * size_product_[(pending | done) | (1 << m)];
      best = std::min(best, bytes * local_us_per_byte_ * (1 - 1e-9) +
                                Cost(SetField(demand, m, kDone)));
    }
    for (const GroupBound& g : groups_) {
      if (g.mask & done) continue;  // nothing touches a dim after its last
      if ((g.mask & pending) == 0) {
        // all_to_all / all_gather: the group is S, every P dim outside.
        const double outside = unit_bytes_ * size_product_[pending | done];
        if (const int served = g.mask & one) {
          best =
              std::min(best, Bound(g, outside, 1) + Cost(meet(served, kNone)));
        }
        if (const int served = g.mask & (one | final)) {
          best = std::min(
              best, Bound(g, g.size * outside, 1) + Cost(meet(served, kNone)));
        }
      }
      // reduce_scatter / all_reduce: the group is P (dims without a
      // demand may have been made P locally).
      const double bytes =
          unit_bytes_ * g.size * size_product_[(pending | done) & ~g.mask];
      if (const int served = g.mask & (one | pending)) {
        best = std::min(best, Bound(g, bytes, 1) + Cost(meet(served, kFinal)));
      }
      if (const int served = g.mask & (one | final | pending)) {
        const double all_reduce = Bound(g, bytes, 2);
        best = std::min(best, all_reduce + Cost(meet(served, kDone)));
        if (served & two) {  // not its last collective after all
          best = std::min(best, all_reduce + Cost(meet(served, kFinal)));
        }
      }
    }
    return best;
  }

  int ndim_;
  double unit_bytes_;  // total / world
  double local_us_per_byte_;
  std::vector<GroupBound> groups_;
  std::vector<double> size_product_;  // by mesh dim mask
  std::vector<int> cover_count_;
  Memo& memo_;
};

// The search's record of one state: the best (cost, communicating steps,
// steps) known for it and how it was reached (the state it came from and
// the group of the step; MakeStep infers the rest when the plan is read
// back). One per distinct state, so memory grows with states, not edges.
struct Record {
  DistState state;
  double cost = std::numeric_limits<double>::infinity();  // unreached
  int32_t comm_steps = 0;
  int32_t steps = 0;
  int32_t parent = -1;
  uint32_t version = 0;  // bumped whenever a cheaper way in is found
  std::array<int8_t, kMaxMeshDims> via_group{};
  int8_t via_size = 0;
  bool closed = false;
};

// Ordered by estimated total cost, then estimated total communicating
// steps (so that among equal-cost plans the fewest collectives win), then
// deeper nodes first (cheap progress through commuting steps), then push
// order (determinism).
struct QueueEntry {
  double f;
  int32_t comm_estimate;
  double g;
  int64_t counter;
  uint32_t record;
  uint32_t version;  // stale when the record has moved on
  bool operator>(const QueueEntry& o) const {
    if (f != o.f) return f > o.f;
    if (comm_estimate != o.comm_estimate)
      return comm_estimate > o.comm_estimate;
    if (g != o.g) return g < o.g;
    return counter > o.counter;
  }
};

// What a search allocates, kept per thread between searches (see
// state_table.h for why) unless a search grew it unusually large.
struct SearchScratch {
  std::vector<QueueEntry> queue;  // a min-heap by std::greater
  StateTable<Record> records;
  RemainingBound::Memo memo;

  void Reset() {
    queue.clear();
    records.Clear();
  }
  // Called when a search ends: keeps at most a few MB per thread.
  void Trim() {
    constexpr size_t kKeepStates = size_t{1} << 15;
    if (records.size() > kKeepStates || queue.capacity() > 4 * kKeepStates) {
      queue = {};
      records.Release();
    }
  }
};

}  // namespace

absl::string_view FlattenPolicyName(FlattenPolicy policy) {
  switch (policy) {
    case FlattenPolicy::kAny:
      return "any";
    case FlattenPolicy::kNone:
      return "none";
    case FlattenPolicy::kExisting:
      break;
  }
  return "existing";
}

std::optional<FlattenPolicy> ParseFlattenPolicy(absl::string_view name) {
  for (FlattenPolicy p :
       {FlattenPolicy::kExisting, FlattenPolicy::kAny, FlattenPolicy::kNone}) {
    if (FlattenPolicyName(p) == name) return p;
  }
  return std::nullopt;
}

absl::StatusOr<SearchResult> OptimalSearch(const Mesh& mesh,
                                           const CostModel& model,
                                           const DistState& src,
                                           const DistState& dst,
                                           const SearchOptions& options) {
  const TensorSpec& tensor = model.tensor();
  const DistState goal = dst.Canonical(mesh);
  EdgeGenerator edges(mesh, src, dst, tensor.rank(), options.flatten_policy);
  const bool has_unit_dims = std::find(mesh.shape().begin(), mesh.shape().end(),
                                       1) != mesh.shape().end();
  auto canonical = [&](const DistState& s) {
    return has_unit_dims ? s.Canonical(mesh) : s;
  };
  thread_local SearchScratch scratch;
  scratch.Reset();
  struct TrimOnExit {
    SearchScratch& scratch;
    ~TrimOnExit() { scratch.Trim(); }
  } trim_on_exit{scratch};
  RemainingBound remaining(mesh, model, options.flatten_policy, scratch.memo);
  auto heuristic = [&](const DistState& s) -> std::pair<double, int> {
    if (!options.use_heuristic) return {0.0, 0};
    return remaining.Of(canonical(s), goal);
  };
  auto better = [](double g, int32_t comm, int32_t steps, const Record& r) {
    if (g != r.cost) return g < r.cost;
    if (comm != r.comm_steps) return comm < r.comm_steps;
    return steps < r.steps;
  };
  StateTable<Record>& records = scratch.records;
  {
    Record& first = *records.FindOrInsert(src.Pack(), {}).value;
    first.state = src;
    first.cost = 0;
  }
  std::vector<QueueEntry>& queue = scratch.queue;
  auto push = [&](const QueueEntry& e) {
    queue.push_back(e);
    std::push_heap(queue.begin(), queue.end(), std::greater<QueueEntry>());
  };
  {
    const auto [h, h_comm] = heuristic(src);
    push({h, h_comm, 0.0, 0, 0, 0});
  }
  int64_t counter = 0;
  SearchResult result;
  bool peak_pruned = false;
  std::vector<int64_t> extents;
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), std::greater<QueueEntry>());
    const QueueEntry top = queue.back();
    queue.pop_back();
    Record& entry = records.at(top.record);
    if (entry.closed || entry.version != top.version) continue;  // stale
    entry.closed = true;
    // `records` grows below: copy what the edges need first.
    const DistState state = entry.state;
    const double cost_here = entry.cost;
    const int32_t comm_here = entry.comm_steps;
    const int32_t steps_here = entry.steps;
    if (canonical(state) == goal) {
      std::vector<uint32_t> chain;
      for (int32_t r = static_cast<int32_t>(top.record); r > 0;
           r = records.at(r).parent) {
        chain.push_back(r);
      }
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Record& r = records.at(*it);
        absl::StatusOr<Step> step = MakeStep(
            mesh, records.at(r.parent).state, r.state,
            Group(r.via_group.begin(), r.via_group.begin() + r.via_size));
        if (!step.ok()) return step.status();
        result.steps.push_back(*std::move(step));
      }
      result.cost = cost_here;
      return result;
    }
    if (options.stop && result.states_expanded % 64 == 0) {
      absl::Status stop = options.stop();
      if (!stop.ok()) return stop;
    }
    if (++result.states_expanded > options.budget) {
      return absl::ResourceExhaustedError(
          absl::StrCat("optimal: search budget of ", options.budget,
                       " expanded states exceeded"));
    }
    extents = MaxLocalExtents(mesh, state, tensor.shape());
    edges.Expand(state, [&](const Transition& t, DistState& to) {
      // One lookup per edge; a state first seen here starts unreached.
      const StateTable<Record>::Found found =
          records.FindOrInsert(to.Pack(), Record{});
      Record& known = *found.value;
      if (found.inserted) known.state = to;
      const StepCost cost = model.PriceWithExtents(state, t, extents);
      if (options.max_peak_bytes.has_value() &&
          cost.peak_bytes > *options.max_peak_bytes) {
        peak_pruned = true;
        return;
      }
      const double g = cost_here + cost.time_us;
      const bool communicating =
          IsCollective(t.op) && mesh.GroupSize(t.group) > 1;
      const int32_t comm = comm_here + (communicating ? 1 : 0);
      const int32_t steps = steps_here + 1;
      if (!better(g, comm, steps, known)) return;
      // A closed state reopens only when reached clearly cheaper (the
      // bound is admissible, not consistent); rounding noise and ties do
      // not reopen.
      if (known.closed && g >= known.cost * (1 - 1e-12)) return;
      const auto [h, h_comm] = heuristic(to);
      const double f = std::max(g + h, top.f);  // pathmax
      if (options.cost_bound.has_value() && f >= *options.cost_bound) return;
      known.cost = g;
      known.comm_steps = comm;
      known.steps = steps;
      known.parent = static_cast<int32_t>(top.record);
      known.via_size = static_cast<int8_t>(t.group.size());
      std::copy(t.group.begin(), t.group.end(), known.via_group.begin());
      known.closed = false;
      push({f, comm + h_comm, g, ++counter, found.index, ++known.version});
    });
  }
  if (options.cost_bound.has_value()) {
    return absl::NotFoundError("optimal: no plan below the cost bound");
  }
  if (peak_pruned) {
    return absl::FailedPreconditionError(
        absl::StrCat("options.max_peak_bytes: no plan from ", src.ToString(),
                     " to ", dst.ToString(), " keeps every step within ",
                     *options.max_peak_bytes, " bytes per rank"));
  }
  return absl::InternalError(absl::StrCat(
      "optimal: no path from ", src.ToString(), " to ", dst.ToString()));
}

}  // namespace reshard
