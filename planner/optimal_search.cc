#include "planner/optimal_search.h"

#include <algorithm>
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

bool MixAllowed(const DistState& state) {
  std::optional<ReduceOp> seen;
  for (int m = 0; m < state.mesh_ndim(); ++m) {
    const Placement& p = state.placement(m);
    if (!p.is_partial()) continue;
    if (seen.has_value() && !PartialOpsCompatible(*seen, p.op())) return false;
    seen = p.op();
  }
  return true;
}

// Partial ops present in src or dst, in the order avg, max, min, sum.
std::vector<ReduceOp> PartialOps(const DistState& src, const DistState& dst) {
  std::vector<ReduceOp> ops;
  for (ReduceOp op :
       {ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kSum}) {
    bool present = false;
    for (const DistState* s : {&src, &dst}) {
      for (int m = 0; m < s->mesh_ndim(); ++m) {
        present = present || s->placement(m) == Placement::Partial(op);
      }
    }
    if (present) ops.push_back(op);
  }
  return ops;
}

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
        partial_ops_(PartialOps(src, dst)) {}

  // Appends every legal edge out of `s`, in a fixed order.
  void Expand(const DistState& s, std::vector<Edge>& out) const {
    out.clear();
    const int ndim = s.mesh_ndim();
    // Effective shard orders: size-1 dims hold no split.
    std::vector<std::vector<int>> eff(tensor_rank_);
    for (int a = 0; a < tensor_rank_; ++a) {
      for (int m : s.ShardOrder(a)) {
        if (mesh_.size(m) > 1) eff[a].push_back(m);
      }
    }
    std::vector<int> partial_dims;
    for (int m = 0; m < ndim; ++m) {
      if (s.placement(m).is_partial() && mesh_.size(m) > 1) partial_dims.push_back(m);
    }
    // all_gather and all_to_all on every usable suffix of every order.
    for (int a = 0; a < tensor_rank_; ++a) {
      for (size_t k = 1; k <= eff[a].size(); ++k) {
        Group g(eff[a].end() - k, eff[a].end());
        if (!Usable(g)) continue;
        DistState popped = s;
        for (int m : g) popped.SetReplicate(m);
        Add(out, s, {StepOp::kAllGather, g, a, std::nullopt}, popped);
        for (int b = 0; b < tensor_rank_; ++b) {
          if (b == a) continue;
          DistState t = popped;
          for (int m : g) t.AppendShard(m, b);
          Add(out, s, {StepOp::kAllToAll, g, a, b}, t);
        }
      }
    }
    // all_reduce on every usable set of partial dims, reduce_scatter on
    // every usable arrangement.
    std::vector<Group> reduce_groups;
    for (int m : partial_dims) reduce_groups.push_back({m});
    if (policy_ == FlattenPolicy::kAny) Arrangements(partial_dims, reduce_groups);
    if (policy_ != FlattenPolicy::kNone) {
      // Registered groups may include size-1 dims, which `any` arrangements
      // skip: keep them so that `any` is never worse than `existing`.
      for (const Group& g : mesh_.flattened()) {
        if (std::all_of(g.begin(), g.end(), [&](int m) {
              return s.placement(m).is_partial();
            })) {
          reduce_groups.push_back(g);
        }
      }
    }
    for (const Group& g : reduce_groups) {
      // The set matters for all_reduce, not the order: one per set.
      if (policy_ != FlattenPolicy::kAny || std::is_sorted(g.begin(), g.end()) ||
          mesh_.IsRegistered(g)) {
        DistState t = s;
        for (int m : g) t.SetReplicate(m);
        Add(out, s, {StepOp::kAllReduce, g, std::nullopt, std::nullopt}, t);
      }
      for (int b = 0; b < tensor_rank_; ++b) {
        DistState t = s;
        for (int m : g) t.AppendShard(m, b);
        Add(out, s, {StepOp::kReduceScatter, g, std::nullopt, b}, t);
      }
    }
    // Local steps on single dims of size > 1.
    for (int m = 0; m < ndim; ++m) {
      if (mesh_.size(m) == 1 || !s.placement(m).is_replicate()) continue;
      for (int b = 0; b < tensor_rank_; ++b) {
        DistState t = s;
        t.AppendShard(m, b);
        Add(out, s, {StepOp::kChunk, {m}, std::nullopt, b}, t);
      }
      for (ReduceOp op : partial_ops_) {
        DistState t = s;
        t.SetPartial(m, op);
        if (MixAllowed(t)) {
          Add(out, s, {StepOp::kPartition, {m}, std::nullopt, std::nullopt, op}, t);
        }
      }
    }
    for (int a = 0; a < tensor_rank_; ++a) {
      if (eff[a].empty()) continue;
      const int m = eff[a].back();
      if (dst_.placement(m) != Placement::Partial(ReduceOp::kSum)) continue;
      DistState t = s;
      t.SetPartial(m, ReduceOp::kSum);
      if (MixAllowed(t)) Add(out, s, {StepOp::kShardToPartial, {m}, a, std::nullopt}, t);
    }
    // Size-1 dims only ever drop to R (it unblocks partial mixes for free).
    for (int m = 0; m < ndim; ++m) {
      if (mesh_.size(m) > 1 || s.placement(m).is_replicate()) continue;
      DistState t = s;
      t.SetReplicate(m);
      const Placement p = s.placement(m);
      if (p.is_shard()) {
        Add(out, s, {StepOp::kAllGather, {m}, p.dim(), std::nullopt}, t);
      } else {
        Add(out, s, {StepOp::kAllReduce, {m}, std::nullopt, std::nullopt}, t);
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

  static void Add(std::vector<Edge>& out, const DistState& from, Transition t,
                  const DistState& to) {
    (void)from;
    out.push_back({std::move(t), to});
  }

  const Mesh& mesh_;
  const DistState& dst_;
  int tensor_rank_;
  FlattenPolicy policy_;
  std::vector<ReduceOp> partial_ops_;
};

// True when `s` still needs at least one collective to become equivalent to
// `dst` (both canonical): some mesh dim holds Partial or Shard data that
// only a collective can change. Every collective on a group of size > 1
// costs at least the base latency, so base * NeedsCollective is admissible.
bool NeedsCollective(const DistState& s, const DistState& dst) {
  for (int m = 0; m < s.mesh_ndim(); ++m) {
    const Placement& p = s.placement(m);
    const Placement& q = dst.placement(m);
    if (p.is_partial() && p != q) return true;
    if (p.is_shard() && q != Placement::Partial(ReduceOp::kSum) &&
        (p != q || s.order_index(m) != dst.order_index(m))) {
      return true;
    }
  }
  return false;
}

struct Node {
  DistState state;
  int64_t parent;
  Transition via;
  double cost;
  int32_t comm_steps;
  int32_t steps;
};

struct QueueEntry {
  double f;
  int32_t comm_steps;
  int32_t steps;
  int64_t counter;
  int64_t node;
  bool operator>(const QueueEntry& o) const {
    if (f != o.f) return f > o.f;
    if (comm_steps != o.comm_steps) return comm_steps > o.comm_steps;
    if (steps != o.steps) return steps > o.steps;
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
  const EdgeGenerator edges(mesh, src, dst, tensor.rank(), options.flatten_policy);
  auto heuristic = [&](const DistState& s) {
    return options.use_heuristic && NeedsCollective(s.Canonical(mesh), goal)
               ? kBaseLatencyUs
               : 0.0;
  };
  std::vector<Node> nodes{{src, -1, {}, 0.0, 0, 0}};
  std::priority_queue<QueueEntry, std::vector<QueueEntry>,
                      std::greater<QueueEntry>>
      queue;
  queue.push({heuristic(src), 0, 0, 0, 0});
  int64_t counter = 0;
  absl::flat_hash_map<DistState, bool> closed;
  std::vector<Edge> out;
  SearchResult result;
  bool peak_pruned = false;
  while (!queue.empty()) {
    const QueueEntry top = queue.top();
    queue.pop();
    const DistState state = nodes[top.node].state;
    if (!closed.emplace(state, true).second) continue;
    if (state.Canonical(mesh) == goal) {
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
    if (++result.states_expanded > options.budget) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "optimal: search budget of ", options.budget,
          " expanded states exceeded"));
    }
    const std::vector<int64_t> extents =
        MaxLocalExtents(mesh, state, tensor.shape());
    edges.Expand(state, out);
    for (Edge& e : out) {
      if (closed.contains(e.to)) continue;
      const StepCost cost = model.PriceWithExtents(state, e.transition, extents);
      if (options.max_peak_bytes.has_value() &&
          cost.peak_bytes > *options.max_peak_bytes) {
        peak_pruned = true;
        continue;
      }
      const double g = nodes[top.node].cost + cost.time_us;
      const double f = g + heuristic(e.to);
      if (options.cost_bound.has_value() && f >= *options.cost_bound) continue;
      const bool communicating =
          IsCollective(e.transition.op) && mesh.GroupSize(e.transition.group) > 1;
      const int32_t comm = top.comm_steps + (communicating ? 1 : 0);
      nodes.push_back({std::move(e.to), top.node, std::move(e.transition), g,
                       comm, top.steps + 1});
      queue.push({f, comm, top.steps + 1, ++counter,
                  static_cast<int64_t>(nodes.size()) - 1});
    }
  }
  if (options.cost_bound.has_value()) {
    return absl::NotFoundError("optimal: no plan below the cost bound");
  }
  if (peak_pruned) {
    return absl::FailedPreconditionError(absl::StrCat(
        "options.max_peak_bytes: no plan from ", src.ToString(), " to ",
        dst.ToString(), " keeps every step within ", *options.max_peak_bytes,
        " bytes per rank"));
  }
  return absl::InternalError(absl::StrCat("optimal: no path from ",
                                          src.ToString(), " to ",
                                          dst.ToString()));
}

}  // namespace reshard
