// A CostModel prices a step: the bytes it moves, its estimated time and the
// peak per-rank memory it needs. Two models exist (docs/DESIGN.md §3.1, §3.3):
//  - alpha_beta (default): latency + bandwidth terms on the largest padded
//    per-rank buffer, ring factors of nccl-tests, per-dim link overrides,
//    the mesh's measured base latency per collective where it has one,
//    on a mesh with a measured copy rate the local copies of blocks that
//    do not lie in place, and on one with a measured reduction rate the
//    reductions of reduce_scatters and all_reduces.
//  - torch: PyTorch's redistribute cost formulas bit for bit, so that the
//    torch_graph planner reproduces PyTorch's Dijkstra tie-breaks.
// A CostModel is immutable and safe for concurrent use; it refers to the
// Mesh and TensorSpec it was built with, which must outlive it.
#ifndef RESHARD_PLANNER_COST_COST_MODEL_H_
#define RESHARD_PLANNER_COST_COST_MODEL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/core/dist_state.h"
#include "planner/core/mesh.h"
#include "planner/core/step.h"
#include "planner/core/tensor_spec.h"

namespace reshard {

enum class CostModelKind { kAlphaBeta, kTorch };

absl::string_view CostModelName(CostModelKind kind);
std::optional<CostModelKind> ParseCostModel(absl::string_view name);

struct CostOptions {
  CostModelKind kind = CostModelKind::kAlphaBeta;
  int64_t devices_per_host = 8;
};

// Model constants (docs/DESIGN.md §3.3); GB = 1e9 bytes for alpha_beta.
inline constexpr double kBaseLatencyUs = 6.6;
inline constexpr double kIntraHostBandwidthGBps = 87.7;
inline constexpr double kIntraHostLatencyUs = 0.6;
inline constexpr double kInterHostBandwidthFactor = 0.22;
inline constexpr double kInterHostLatencyUs = 2.7;
inline constexpr double kLocalBandwidthGBps = 2000;

// Lower bounds on costs are scaled by this factor so that floating-point
// rounding never lifts one above a real cost (A* needs admissible bounds);
// a cost counts as clearly lower than another only below it times this.
inline constexpr double kCostBoundSlack = 1 - 1e-9;

struct StepCost {
  int64_t bytes = 0;
  double time_us = 0;
  // The step's padded input and output on the largest rank: a lower bound
  // of what a runner holds for it (plan_memory.h adds the packing buffers),
  // which the optimal search prunes by under max_peak_bytes.
  int64_t peak_bytes = 0;
};

// A group's link: the per-hop latency (µs) and bandwidth (GB/s, or GiB/s
// under torch) a collective on it is priced with.
struct GroupLink {
  double lat = 0;
  double bw = 0;
};

class CostModel {
 public:
  CostModel(const Mesh& mesh, const TensorSpec& tensor, CostOptions options);

  CostModelKind kind() const { return options_.kind; }
  // True when a collective on a group of one rank costs time (the torch
  // model prices every step PyTorch keeps on a size-1 dim): folding such a
  // dim into another collective then saves that time.
  bool PricesOneRankCollectives() const {
    return options_.kind == CostModelKind::kTorch;
  }
  const CostOptions& options() const { return options_; }
  const Mesh& mesh() const { return mesh_; }
  const TensorSpec& tensor() const { return tensor_; }

  // Prices `t` applied to `from` under this model. `t` must be legal there.
  StepCost Price(const DistState& from, const Transition& t) const;
  // The same, given `from`'s MaxLocalExtents (searches price many edges of
  // one state).
  StepCost PriceWithExtents(const DistState& from, const Transition& t,
                            absl::Span<const int64_t> extents) const;

  // PyTorch's edge cost (one_step_redistribute_cost), in µs, for the torch
  // model; multi-dim groups use n = group size, max latency, min bandwidth.
  double TorchTime(const DistState& from, const Transition& t) const;

  // The time, in µs, of one collective `op` on `group` that moves `bytes`
  // (counted as StepCost::bytes counts them under this model): the formula
  // every collective step is priced by, exposed so that a bucket of several
  // tensors' steps (bucket_schedule.h) is priced as the one collective it
  // is; a step adds the packing of its blocks that do not lie in place
  // (PackingUsPerByte). alpha_beta: 0 on groups of size 1; on a mesh with a
  // reduction rate, the reduction (ReductionUs) included. torch: PyTorch's
  // formula on `bytes` read as GiB (an all_gather's are the gathered bytes).
  double CollectiveTime(StepOp op, absl::Span<const int> group,
                        int64_t bytes) const;

  // Padded buffer sizes of `t` from `from`, in bytes: {input, output}.
  std::pair<int64_t, int64_t> PaddedBuffers(
      const DistState& from, const Transition& t,
      absl::Span<const int64_t> extents) const;

  // A lower bound on the time of any collective on a group holding every
  // dim of a group: the group's latency plus the ring term at its slowest
  // link, `rounds` times (2 for all_reduce), for a ring term covering at
  // least `bytes` per rank; an all_to_all's own price under alpha_beta.
  // Scaled down a hair so that rounding never makes it exceed a real cost
  // (A* needs admissible bounds). Zero for groups of size 1.
  // An all_to_all on any such group costs at least AllToAllTime of its
  // buffer. A reduction (Mesh::reduce_gbps) only adds time, so the bound
  // leaves it out and stays admissible.
  struct CollectiveBound {
    double base_us = 0;
    double hop_us = 0;
    double us_per_byte = 0;
    double all_to_all_us = 0;  // base and latency
    double all_to_all_us_per_byte = 0;
    // The bound of a collective of `rounds` ring passes, and of an
    // all_to_all, as fixed µs plus µs per byte moved.
    struct Affine {
      double fixed_us;
      double us_per_byte;
      double At(double bytes) const { return fixed_us + us_per_byte * bytes; }
    };
    Affine Time(int rounds) const {
      return {(base_us + rounds * hop_us) * kCostBoundSlack,
              rounds * us_per_byte * kCostBoundSlack};
    }
    Affine AllToAllTime() const {
      return {all_to_all_us * kCostBoundSlack,
              all_to_all_us_per_byte * kCostBoundSlack};
    }
  };
  CollectiveBound LowerBound(absl::Span<const int> group) const;
  // Under alpha_beta, mesh dim `dim`'s own link (its override, else the
  // defaults by devices_per_host).
  GroupLink DimLink(int dim) const { return {ab_lat_[dim], ab_bw_[dim]}; }
  // What a rank's local copy of a byte costs in a local step: the mesh's
  // copy rate, else kLocalBandwidthGBps; 0 under the torch model.
  double LocalCopyUsPerByte() const { return copy_us_per_byte_; }
  // What packing or unpacking a byte of a collective's blocks that do not
  // lie in place costs (packing_bytes.h): the mesh's measured copy rate; 0
  // on a mesh without one (at a GPU's copy rate packing is within the
  // model's error, and pricing it costs the search its ties) and under the
  // torch model.
  double PackingUsPerByte() const { return packing_us_per_byte_; }

 private:
  // A local step's copy, or a collective and the packing of its blocks
  // that do not lie in place on the rank with `extents`.
  double AlphaBetaTime(const DistState& from, const Transition& t,
                       int64_t bytes, absl::Span<const int64_t> extents) const;
  // Under alpha_beta: the group's dims' slowest link, or the serving
  // registered group's own link (Mesh::FlattenedLink) where it has one.
  GroupLink AlphaBetaLink(absl::Span<const int> group) const;
  // The fastest link of any group over the same dims (LowerBound's).
  GroupLink FastestLinkOver(absl::Span<const int> group) const;
  // Under alpha_beta, an all_to_all on `group` (size > 1): its dim set's
  // latency (GroupAllToAllLatency) and AllToAllUsPerByte over its dims' links;
  // a flattened group's own bandwidth and hop latency price rings only
  // (docs/DESIGN.md §3.3).
  double AllToAllTime(absl::Span<const int> group, int64_t bytes) const;
  void InitAllToAll();
  // An all_to_all's latency on the dims of `mask` (InitAllToAll): the
  // lowest measured one (LinkParams::all_to_all_us) of a registered group
  // over exactly those dims (a property of the ranks, not of their order),
  // else the slowest of its dims' (a dim's measured one, else one hop).
  // This is the first; nullopt without one.
  std::optional<double> GroupAllToAllLatency(int mask) const;

  const Mesh& mesh_;
  const TensorSpec& tensor_;
  CostOptions options_;
  // Per mesh dim link values for each model.
  std::vector<double> torch_bw_, torch_lat_, ab_bw_, ab_lat_;
  bool has_group_links_ = false;  // some flattened group has its own link
  // Every collective's base latency: the mesh's measured one, else
  // kBaseLatencyUs (PyTorch's, which the torch model always uses).
  double base_us_ = kBaseLatencyUs;
  double copy_us_per_byte_ = 0;
  double packing_us_per_byte_ = 0;
  // Under alpha_beta, the mesh's measured reduction rate (Mesh::reduce_gbps).
  std::optional<double> reduce_gbps_;
  // Under alpha_beta, per set of dims of size > 1 (a bit mask): an
  // all_to_all's latency and µs per buffer byte.
  struct AllToAllPrice {
    double lat_us = 0;
    double us_per_byte = 0;
  };
  std::vector<AllToAllPrice> all_to_all_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_COST_MODEL_H_
