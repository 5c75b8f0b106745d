#include "planner/torch_graph.h"

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
  Neighbours(const Mesh& mesh, const CostModel& model, const DistState& dst,
             int tensor_rank, std::vector<ReduceOp> partial_ops)
      : mesh_(mesh),
        model_(model),
        dst_(dst),
        tensor_rank_(tensor_rank),
        partial_ops_(std::move(partial_ops)) {}

  // PyTorch's get_next_state order, then the S->P(sum) target edges.
  void Expand(const DistState& s, std::vector<Edge>& out) const {
    out.clear();
    const int ndim = s.mesh_ndim();
    std::vector<int> last_dims;  // last mesh dim of each sharded tensor dim
    for (int a = 0; a < tensor_rank_; ++a) {
      const int depth = s.ShardDepth(a);
      if (depth == 0) continue;
      for (int m = 0; m < ndim; ++m) {
        if (s.placement(m) == Placement::Shard(a) &&
            s.order_index(m) == depth - 1) {
          last_dims.push_back(m);
        }
      }
    }
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
    for (int m = 0; m < ndim; ++m) {  // (3) P -> R
      if (!s.placement(m).is_partial()) continue;
      DistState t = s;
      t.SetReplicate(m);
      Add(s, t, m, out);
    }
    for (bool from_partial : {false, true}) {  // (4) R -> S, (5) P -> S
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
    for (int m = 0; m < ndim; ++m) {  // (6) R -> P(op)
      if (!s.placement(m).is_replicate()) continue;
      for (ReduceOp op : partial_ops_) {
        DistState t = s;
        t.SetPartial(m, op);
        if (t.HasAllowedPartialMix()) Add(s, t, m, out);
      }
    }
    for (int m : last_dims) {  // (7) S -> P(sum), destination-directed
      if (dst_.placement(m) != Placement::Partial(ReduceOp::kSum)) continue;
      DistState t = s;
      t.SetPartial(m, ReduceOp::kSum);
      if (t.HasAllowedPartialMix()) out.push_back({t, m, 0.0});
    }
  }

 private:
  void Add(const DistState& from, const DistState& to, int m,
           std::vector<Edge>& out) const {
    Transition t;
    const Placement src = from.placement(m);
    const Placement dst = to.placement(m);
    if (src.is_shard()) t.src_tensor_dim = src.dim();
    if (dst.is_shard()) t.dst_tensor_dim = dst.dim();
    t.group = {m};
    if (src.is_shard()) {
      t.op = dst.is_shard() ? StepOp::kAllToAll : StepOp::kAllGather;
    } else if (src.is_partial()) {
      t.op = dst.is_shard() ? StepOp::kReduceScatter : StepOp::kAllReduce;
    } else {
      t.op = dst.is_shard() ? StepOp::kChunk : StepOp::kPartition;
    }
    out.push_back({to, m, model_.TorchTime(from, t)});
  }

  const Mesh& mesh_;
  const CostModel& model_;
  const DistState& dst_;
  int tensor_rank_;
  std::vector<ReduceOp> partial_ops_;
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

}  // namespace

absl::StatusOr<GraphResult> TorchGraphSteps(
    const Mesh& mesh, const CostModel& torch_model, const DistState& src,
    const DistState& dst, int64_t max_expanded,
    const std::function<absl::Status()>& stop) {
  const int tensor_rank = torch_model.tensor().rank();
  Neighbours neighbours(mesh, torch_model, dst, tensor_rank,
                        PartialOpsIn(src, dst));
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
      std::vector<int64_t> chain;
      for (int64_t n = top.node; n > 0; n = nodes[n].parent) chain.push_back(n);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Node& node = nodes[*it];
        absl::StatusOr<Step> step = MakeStep(mesh, nodes[node.parent].state,
                                             node.state, {node.mesh_dim});
        if (!step.ok()) return step.status();
        result.steps.push_back(*std::move(step));
      }
      return result;
    }
    if (!visited.insert(nodes[top.node].state).second) continue;
    if (stop && result.states_expanded % 64 == 0) {
      absl::Status s = stop();
      if (!s.ok()) return s;
    }
    if (++result.states_expanded > max_expanded) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "torch_graph: more than ", max_expanded, " states expanded"));
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
