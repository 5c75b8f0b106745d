#include "planner/optimal_search.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/local_layout.h"

namespace reshard {
namespace {

// An edge of the search graph: a transition and the state it leads to.
struct Edge {
  Transition transition;
  DistState to;
};

// Every ordered arrangement of every subset of `dims` with >= 2 elements.
void Arrangements(const std::vector<int>& dims, std::vector<Group>& out) {
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

class EdgeGenerator {
 public:
  EdgeGenerator(const Mesh& mesh, const DistState& src, const DistState& dst,
                int tensor_rank, FlattenPolicy policy)
      : mesh_(mesh),
        dst_(dst),
        tensor_rank_(tensor_rank),
        policy_(policy),
        partial_ops_(PartialOpsIn(src, dst)) {}

  // Appends every legal edge out of `s`, in a fixed order.
  void Expand(const DistState& s, std::vector<Edge>& out) const {
    out.clear();
    const int ndim = s.mesh_ndim();
    // Effective shard orders: size-1 dims hold no split.
    std::vector<Group> eff(tensor_rank_);
    for (int index = 0; index < ndim; ++index) {
      for (int m = 0; m < ndim; ++m) {
        const Placement& p = s.placement(m);
        if (p.is_shard() && s.order_index(m) == index && mesh_.size(m) > 1) {
          eff[p.dim()].push_back(m);
        }
      }
    }
    std::vector<int> partial_dims;
    for (int m = 0; m < ndim; ++m) {
      if (s.placement(m).is_partial() && mesh_.size(m) > 1)
        partial_dims.push_back(m);
    }
    // all_gather and all_to_all on every usable suffix of every order.
    for (int a = 0; a < tensor_rank_; ++a) {
      for (size_t k = 1; k <= eff[a].size(); ++k) {
        Group g(eff[a].end() - k, eff[a].end());
        if (!Usable(g)) continue;
        DistState popped = s;
        for (int m : g) popped.SetReplicate(m);
        Add(out, {StepOp::kAllGather, g, a, std::nullopt}, popped);
        for (int b = 0; b < tensor_rank_; ++b) {
          if (b == a) continue;
          DistState t = popped;
          for (int m : g) t.AppendShard(m, b);
          Add(out, {StepOp::kAllToAll, g, a, b}, t);
        }
      }
    }
    // all_reduce on every usable set of partial dims, reduce_scatter on
    // every usable arrangement.
    std::vector<Group> reduce_groups;
    for (int m : partial_dims) reduce_groups.push_back({m});
    if (policy_ == FlattenPolicy::kAny)
      Arrangements(partial_dims, reduce_groups);
    if (policy_ != FlattenPolicy::kNone) {
      // Registered groups may include size-1 dims, which `any` arrangements
      // skip: keep them so that `any` is never worse than `existing`.
      for (const Group& g : mesh_.flattened()) {
        if (std::all_of(g.begin(), g.end(),
                        [&](int m) { return s.placement(m).is_partial(); })) {
          reduce_groups.push_back(g);
        }
      }
    }
    for (const Group& g : reduce_groups) {
      // The set matters for all_reduce, not the order: one per set.
      if (policy_ != FlattenPolicy::kAny ||
          std::is_sorted(g.begin(), g.end()) || mesh_.IsRegistered(g)) {
        DistState t = s;
        for (int m : g) t.SetReplicate(m);
        Add(out, {StepOp::kAllReduce, g, std::nullopt, std::nullopt}, t);
      }
      for (int b = 0; b < tensor_rank_; ++b) {
        DistState t = s;
        for (int m : g) t.AppendShard(m, b);
        Add(out, {StepOp::kReduceScatter, g, std::nullopt, b}, t);
      }
    }
    // Local steps on single dims of size > 1.
    for (int m = 0; m < ndim; ++m) {
      if (mesh_.size(m) == 1 || !s.placement(m).is_replicate()) continue;
      for (int b = 0; b < tensor_rank_; ++b) {
        DistState t = s;
        t.AppendShard(m, b);
        Add(out, {StepOp::kChunk, {m}, std::nullopt, b}, t);
      }
      for (ReduceOp op : partial_ops_) {
        DistState t = s;
        t.SetPartial(m, op);
        if (t.HasAllowedPartialMix()) {
          Add(out, {StepOp::kPartition, {m}, std::nullopt, std::nullopt, op},
              t);
        }
      }
    }
    for (int a = 0; a < tensor_rank_; ++a) {
      if (eff[a].empty()) continue;
      const int m = eff[a].back();
      if (dst_.placement(m) != Placement::Partial(ReduceOp::kSum)) continue;
      DistState t = s;
      t.SetPartial(m, ReduceOp::kSum);
      if (t.HasAllowedPartialMix())
        Add(out, {StepOp::kShardToPartial, {m}, a, std::nullopt}, t);
    }
    // Size-1 dims only ever drop to R (it unblocks partial mixes for free).
    for (int m = 0; m < ndim; ++m) {
      if (mesh_.size(m) > 1 || s.placement(m).is_replicate()) continue;
      DistState t = s;
      t.SetReplicate(m);
      const Placement p = s.placement(m);
      if (p.is_shard()) {
        Add(out, {StepOp::kAllGather, {m}, p.dim(), std::nullopt}, t);
      } else {
        Add(out, {StepOp::kAllReduce, {m}, std::nullopt, std::nullopt}, t);
      }
    }
  }

 private:
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

  static void Add(std::vector<Edge>& out, Transition t, const DistState& to) {
    out.push_back({std::move(t), to});
  }

  const Mesh& mesh_;
  const DistState& dst_;
  int tensor_rank_;
  FlattenPolicy policy_;
  std::vector<ReduceOp> partial_ops_;
};

// Lower bounds on what a state still needs (cost and communicating steps).
//
// Every mesh dim (size > 1) holding Partial or Shard data that only a
// collective can change needs a collective on a group containing it. Such
// collectives move at least total/world bytes per rank (total*s/world for a
// Partial dim, which splits nothing), so the cheapest cover of those dims by
// usable groups bounds the remaining cost, and the smallest cover bounds the
// remaining communicating steps. Covers are precomputed for every set of
// dims (at most 2^8) by dynamic programming over the usable groups.
class RemainingBound {
 public:
  RemainingBound(const Mesh& mesh, const CostModel& model, FlattenPolicy policy)
      : ndim_(mesh.ndim()) {
    const double total =
        static_cast<double>(model.tensor().itemsize() * model.tensor().numel());
    const double world = static_cast<double>(mesh.world_size());
    int usable = 0;  // dims of size > 1
    for (int m = 0; m < ndim_; ++m) {
      if (mesh.size(m) > 1) usable |= 1 << m;
      partial_bound_.push_back(
          mesh.size(m) > 1
              ? model.CollectiveLowerBound({m}, total * mesh.size(m) / world)
              : 0.0);
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
        if (mask != 0) masks.push_back(mask);
      }
    }
    std::vector<double> group_cost;
    for (int mask : masks) {
      Group g;
      for (int m = 0; m < ndim_; ++m) {
        if (mask & (1 << m)) g.push_back(m);
      }
      group_cost.push_back(model.CollectiveLowerBound(g, total / world));
    }
    const int full = 1 << ndim_;
    cover_cost_.assign(full, std::numeric_limits<double>::infinity());
    cover_count_.assign(full, 1 << 20);
    cover_cost_[0] = 0;
    cover_count_[0] = 0;
    for (int mask = 1; mask < full; ++mask) {
      if ((mask & usable) != mask) continue;
      const int low = mask & -mask;  // some group must cover the lowest dim
      for (size_t i = 0; i < masks.size(); ++i) {
        if (!(masks[i] & low)) continue;
        const int rest = mask & ~masks[i];
        cover_cost_[mask] =
            std::min(cover_cost_[mask], group_cost[i] + cover_cost_[rest]);
        cover_count_[mask] =
            std::min(cover_count_[mask], 1 + cover_count_[rest]);
      }
    }
  }

  // {cost bound, communicating-step bound} from `s` to `dst`, both
  // canonical.
  std::pair<double, int> Of(const DistState& s, const DistState& dst) const {
    int needing = 0;
    double partial = 0;
    for (int m = 0; m < ndim_; ++m) {
      const Placement& p = s.placement(m);
      const Placement& q = dst.placement(m);
      if (p.is_partial() && p != q) {
        needing |= 1 << m;
        partial = std::max(partial, partial_bound_[m]);
      } else if (p.is_shard() && q != Placement::Partial(ReduceOp::kSum) &&
                 (p != q || s.order_index(m) != dst.order_index(m))) {
        needing |= 1 << m;
      }
    }
    return {std::max(cover_cost_[needing], partial), cover_count_[needing]};
  }

 private:
  int ndim_;
  std::vector<double> partial_bound_;
  std::vector<double> cover_cost_;
  std::vector<int> cover_count_;
};

struct Node {
  DistState state;
  int64_t parent;
  Transition via;
  double cost;
  int32_t comm_steps;
  int32_t steps;
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
  int64_t node;
  bool operator>(const QueueEntry& o) const {
    if (f != o.f) return f > o.f;
    if (comm_estimate != o.comm_estimate)
      return comm_estimate > o.comm_estimate;
    if (g != o.g) return g < o.g;
    return counter > o.counter;
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
  const EdgeGenerator edges(mesh, src, dst, tensor.rank(),
                            options.flatten_policy);
  const bool has_unit_dims = std::find(mesh.shape().begin(), mesh.shape().end(),
                                       1) != mesh.shape().end();
  auto canonical = [&](const DistState& s) {
    return has_unit_dims ? s.Canonical(mesh) : s;
  };
  const RemainingBound remaining(mesh, model, options.flatten_policy);
  auto heuristic = [&](const DistState& s) -> std::pair<double, int> {
    if (!options.use_heuristic) return {0.0, 0};
    return remaining.Of(canonical(s), goal);
  };
  // Best known (cost, communicating steps, steps) per state; a state is
  // pushed again only when reached strictly better, and expanded once.
  struct Best {
    double cost;
    int32_t comm_steps;
    int32_t steps;
    int64_t node;
    bool closed;
  };
  auto better = [](double g, int32_t comm, int32_t steps, const Best& b) {
    if (g != b.cost) return g < b.cost;
    if (comm != b.comm_steps) return comm < b.comm_steps;
    return steps < b.steps;
  };
  std::deque<Node> nodes{{src, -1, {}, 0.0, 0, 0}};  // stable, no copies
  absl::flat_hash_map<DistState, Best> best;
  best.reserve(4096);
  best.emplace(src, Best{0.0, 0, 0, 0, false});
  std::priority_queue<QueueEntry, std::vector<QueueEntry>,
                      std::greater<QueueEntry>>
      queue;
  {
    const auto [h, h_comm] = heuristic(src);
    queue.push({h, h_comm, 0.0, 0, 0});
  }
  int64_t counter = 0;
  std::vector<Edge> out;
  SearchResult result;
  bool peak_pruned = false;
  while (!queue.empty()) {
    const QueueEntry top = queue.top();
    queue.pop();
    const DistState state = nodes[top.node].state;
    Best& entry = best.find(state)->second;
    if (entry.closed || entry.node != top.node) continue;  // stale entry
    entry.closed = true;
    if (canonical(state) == goal) {
      std::vector<int64_t> chain;
      for (int64_t n = top.node; n > 0; n = nodes[n].parent) chain.push_back(n);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Node& node = nodes[*it];
        absl::StatusOr<Step> step = MakeStep(mesh, nodes[node.parent].state,
                                             node.state, node.via.group);
        if (!step.ok()) return step.status();
        result.steps.push_back(*std::move(step));
      }
      result.cost = nodes[top.node].cost;
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
    const Node& here = nodes[top.node];
    const double cost_here = here.cost;
    const int32_t comm_here = here.comm_steps;
    const int32_t steps_here = here.steps;
    const std::vector<int64_t> extents =
        MaxLocalExtents(mesh, state, tensor.shape());
    edges.Expand(state, out);
    for (Edge& e : out) {
      auto known = best.find(e.to);
      if (known != best.end() && known->second.closed) continue;
      const StepCost cost =
          model.PriceWithExtents(state, e.transition, extents);
      if (options.max_peak_bytes.has_value() &&
          cost.peak_bytes > *options.max_peak_bytes) {
        peak_pruned = true;
        continue;
      }
      const double g = cost_here + cost.time_us;
      const bool communicating = IsCollective(e.transition.op) &&
                                 mesh.GroupSize(e.transition.group) > 1;
      const int32_t comm = comm_here + (communicating ? 1 : 0);
      const int32_t steps = steps_here + 1;
      if (known != best.end() && !better(g, comm, steps, known->second))
        continue;
      const auto [h, h_comm] = heuristic(e.to);
      const double f = g + h;
      if (options.cost_bound.has_value() && f >= *options.cost_bound) continue;
      const int64_t node = static_cast<int64_t>(nodes.size());
      if (known == best.end()) {
        best.emplace(e.to, Best{g, comm, steps, node, false});
      } else {
        known->second = Best{g, comm, steps, node, false};
      }
      nodes.push_back(
          {std::move(e.to), top.node, std::move(e.transition), g, comm, steps});
      queue.push({f, comm + h_comm, g, ++counter, node});
    }
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
