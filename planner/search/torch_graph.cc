#include "planner/search/torch_graph.h"

#include <queue>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

struct Edge {
  DistState to;
  int mesh_dim;
  double cost;
};

class Neighbours {
 public:
  Neighbours(const Mesh& mesh, const CostModel& model, int tensor_rank,
             std::vector<ReduceOp> partial_ops, const DistState& dst)
      : mesh_(mesh),
        model_(model),
        tensor_rank_(tensor_rank),
        partial_ops_(std::move(partial_ops)),
        dst_(dst) {}

  // PyTorch's get_next_state order, then its destination-directed edges.
  void Expand(const DistState& s, std::vector<Edge>& out) const {
    out.clear();
    const std::vector<int> last_dims = LastShardDims(s);
    for (int m : last_dims) {  // (1) S(a) -> S(b)
      const int a = s.placement(m).dim();
      for (int b = 0; b < tensor_rank_; ++b) {
        if (b == a) continue;
        DistState t = s;
        t.AppendShard(m, b);
        Add(s, t, m, out);
      }
    }
    for (int m : last_dims) {  // (2) S -> R
      DistState t = s;
      t.SetReplicate(m);
      Add(s, t, m, out);
    }
    for (int m = 0; m < s.mesh_ndim(); ++m) {  // (3) P -> R
      if (!s.placement(m).is_partial()) continue;
      DistState t = s;
      t.SetReplicate(m);
      Add(s, t, m, out);
    }
    SplitAndPartitionEdges(s, out);             // (4) to (6)
    ShardToPartialSumEdges(s, last_dims, out);  // (7)
  }

 private:
  // The last mesh dim of each sharded tensor dim's order, by tensor dim.
  std::vector<int> LastShardDims(const DistState& s) const {
    std::vector<int> last_dims;
    for (int a = 0; a < tensor_rank_; ++a) {
      const int depth = s.ShardDepth(a);
      if (depth == 0) continue;
      for (int m = 0; m < s.mesh_ndim(); ++m) {
        if (s.placement(m) == Placement::Shard(a) &&
            s.order_index(m) == depth - 1) {
          last_dims.push_back(m);
        }
      }
    }
    return last_dims;
  }

  // (4) R -> S, (5) P -> S, (6) R -> P(op).
  void SplitAndPartitionEdges(const DistState& s,
                              std::vector<Edge>& out) const {
    const int ndim = s.mesh_ndim();
    for (bool from_partial : {false, true}) {
      for (int m = 0; m < ndim; ++m) {
        if (s.placement(m).is_partial() != from_partial ||
            s.placement(m).is_shard()) {
          continue;
        }
        for (int b = 0; b < tensor_rank_; ++b) {
          DistState t = s;
          t.AppendShard(m, b);
          Add(s, t, m, out);
        }
      }
    }
    for (int m = 0; m < ndim; ++m) {
      if (!s.placement(m).is_replicate()) continue;
      for (ReduceOp op : partial_ops_) {
        DistState t = s;
        t.SetPartial(m, op);
        if (t.HasAllowedPartialMix()) Add(s, t, m, out);
      }
    }
  }

  // (7) S(a) -> P(sum) on a mesh dim last in a's shard order, only where
  // the destination holds P(sum) there: a local zero-fill that PyTorch
  // prices at 0 (no communication) and offers only towards that target, so
  // no path passes through it to another layout. Like (6) it skips
  // forbidden mixes (docs/DESIGN.md §3.1), which PyTorch offers.
  void ShardToPartialSumEdges(const DistState& s,
                              const std::vector<int>& last_dims,
                              std::vector<Edge>& out) const {
    const Placement sum = Placement::Partial(ReduceOp::kSum);
    for (int m : last_dims) {
      if (dst_.placement(m) != sum) continue;
      DistState t = s;
      t.SetPartial(m, ReduceOp::kSum);
      if (t.HasAllowedPartialMix()) out.push_back({std::move(t), m, 0.0});
    }
  }

  void Add(const DistState& from, const DistState& to, int m,
           std::vector<Edge>& out) const {
    Transition t;
    const Placement src = from.placement(m);
    const Placement dst = to.placement(m);
    if (src.is_shard()) t.src_tensor_dim = src.dim();
    if (dst.is_shard()) t.dst_tensor_dim = dst.dim();
    t.group = {m};
    t.op = *InferOp(src, dst);  // every edge changes the placement of m
    out.push_back({to, m, model_.TorchTime(from, t)});
  }

  const Mesh& mesh_;
  const CostModel& model_;
  int tensor_rank_;
  std::vector<ReduceOp> partial_ops_;
  const DistState& dst_;
};

struct Node {
  DistState state;
  int64_t parent;  // index into the node arena, -1 for the source
  int mesh_dim;
};

struct QueueEntry {
  double cost;
  int64_t counter;
  int64_t node;
  bool operator>(const QueueEntry& o) const {
    return cost != o.cost ? cost > o.cost : counter > o.counter;
  }
};

// What the search's tables hold, checked as often as the stop: past half
// of `max_bytes` (they grow by doubling), RESOURCE_EXHAUSTED naming it.
absl::Status CheckMemory(int64_t expanded, size_t nodes, size_t queued,
                         size_t visited, int64_t max_bytes,
                         const DistState& dst) {
  if (expanded % kStopPollInterval != 0) return absl::OkStatus();
  const auto used =
      static_cast<int64_t>(nodes * sizeof(Node) + queued * sizeof(QueueEntry) +
                           visited * (sizeof(DistState) + 1));
  if (2 * used <= max_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("torch_graph: its search reached the memory bound of ",
                   max_bytes, " bytes (--max_search_bytes) after ", expanded,
                   " states without reaching ", dst.ToString(),
                   "; use the optimal planner"));
}

}  // namespace

absl::StatusOr<GraphResult> TorchGraphSteps(
    const Mesh& mesh, const CostModel& torch_model, const DistState& src,
    const DistState& dst, int64_t budget, const StopCheck& stop,
    int64_t max_bytes) {
  const int tensor_rank = torch_model.tensor().rank();
  Neighbours neighbours(mesh, torch_model, tensor_rank, PartialOpsIn(src, dst),
                        dst);
  std::vector<Node> nodes{{src, -1, -1}};
  std::priority_queue<QueueEntry, std::vector<QueueEntry>,
                      std::greater<QueueEntry>>
      queue;
  queue.push({0.0, 0, 0});
  int64_t counter = 0;
  absl::flat_hash_set<DistState> visited;
  std::vector<Edge> edges;
  GraphResult result;
  while (!queue.empty()) {
    const QueueEntry top = queue.top();
    queue.pop();
    if (nodes[top.node].state == dst) {
      absl::StatusOr<std::vector<Step>> steps = ReadBackPath(
          top.node, [&](int64_t n) { return nodes[n].parent; },
          [&](int64_t n) {
            const Node& node = nodes[n];
            return MakeStep(mesh, nodes[node.parent].state, node.state,
                            {node.mesh_dim});
          });
      if (!steps.ok()) return steps.status();
      result.steps = *std::move(steps);
      return result;
    }
    if (!visited.insert(nodes[top.node].state).second) continue;
    if (absl::Status s = PollStop(stop, result.states_expanded); !s.ok()) {
      return s;
    }
    if (++result.states_expanded > budget) {
      return absl::ResourceExhaustedError(
          absl::StrCat("options.search_budget: torch_graph expanded ", budget,
                       " states without reaching ", dst.ToString(),
                       "; raise the search budget or use the optimal planner"));
    }
    if (absl::Status s =
            CheckMemory(result.states_expanded, nodes.size(), queue.size(),
                        visited.size(), max_bytes, dst);
        !s.ok()) {
      return s;
    }
    const DistState current = nodes[top.node].state;
    neighbours.Expand(current, edges);
    for (Edge& e : edges) {
      if (visited.contains(e.to)) continue;
      nodes.push_back({std::move(e.to), top.node, e.mesh_dim});
      queue.push({top.cost + e.cost, ++counter,
                  static_cast<int64_t>(nodes.size()) - 1});
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "torch_graph: PyTorch's planner finds no path from ", src.ToString(),
      " to ", dst.ToString(), "; use the optimal planner"));
}

}  // namespace reshard
