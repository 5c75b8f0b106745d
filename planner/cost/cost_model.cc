#include "planner/cost/cost_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>

#include "planner/core/enum_names.h"
#include "planner/core/local_layout.h"
#include "planner/core/step_layout.h"
#include "planner/cost/collective_factors.h"
#include "planner/cost/packing_bytes.h"

namespace reshard {
namespace {

constexpr double kBytesPerGiB = 1024.0;  // applied three times, as PyTorch.

// PyTorch's allgather/reduce_scatter (hops = n-1) and allreduce
// (hops = 2(n-1)) formulas, in PyTorch's operation order.
double TorchCollective(double bytes_gb, int64_t n, int64_t hops, double lat,
                       double bw) {
  const double latency = kBaseLatencyUs + static_cast<double>(hops) * lat;
  const double seconds =
      (bytes_gb * static_cast<double>(hops) / static_cast<double>(n)) / bw;
  return latency + seconds * 1e6;
}

GroupLink SlowestLink(const std::vector<double>& lat,
                      const std::vector<double>& bw,
                      absl::Span<const int> group) {
  GroupLink link{0, bw[group[0]]};
  for (int m : group) {
    link.lat = std::max(link.lat, lat[m]);
    link.bw = std::min(link.bw, bw[m]);
  }
  return link;
}

// The non-unit dims of `group` as a bit set.
int NonUnitMask(const Mesh& mesh, absl::Span<const int> group) {
  int mask = 0;
  for (int d : group) {
    if (mesh.size(d) > 1) mask |= 1 << d;
  }
  return mask;
}

// `link` with the fields `own` sets.
GroupLink WithOwnLink(GroupLink link, const LinkParams& own) {
  if (own.bandwidth_gbps.has_value()) link.bw = *own.bandwidth_gbps;
  if (own.latency_us.has_value()) link.lat = *own.latency_us;
  return link;
}

// PyTorch's price of a collective `op` on `n` members moving `bytes_gb`
// (all_to_all pays 1 µs more, as PyTorch's shard-to-shard edge does).
double TorchOpTime(StepOp op, int64_t n, double bytes_gb,
                   const GroupLink& link) {
  const double time =
      TorchCollective(bytes_gb, n, RingHops(op, n), link.lat, link.bw);
  return op == StepOp::kAllToAll ? time + 1.0 : time;
}

}  // namespace

namespace {

// In the order of CostModelKind's values.
constexpr std::array<absl::string_view, 2> kCostModelNames = {"alpha_beta",
                                                              "torch"};

}  // namespace

absl::string_view CostModelName(CostModelKind kind) {
  return EnumName(kind, kCostModelNames);
}

std::optional<CostModelKind> ParseCostModel(absl::string_view name) {
  return ParseEnumName<CostModelKind>(name, kCostModelNames);
}

CostModel::CostModel(const Mesh& mesh, const TensorSpec& tensor,
                     CostOptions options)
    : mesh_(mesh), tensor_(tensor), options_(options) {
  const int ndim = mesh.ndim();
  torch_bw_.assign(ndim, kIntraHostBandwidthGBps);
  torch_lat_.assign(ndim, kIntraHostLatencyUs);
  int64_t devices = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    devices *= mesh.size(d);
    if (devices > options.devices_per_host) {
      torch_bw_[d] *= kInterHostBandwidthFactor;
      torch_lat_[d] = kInterHostLatencyUs;
    }
  }
  ab_bw_ = torch_bw_;
  ab_lat_ = torch_lat_;
  for (int d = 0; d < ndim; ++d) {
    const LinkParams& link = mesh.links()[d];
    if (link.bandwidth_gbps.has_value()) ab_bw_[d] = *link.bandwidth_gbps;
    if (link.latency_us.has_value()) ab_lat_[d] = *link.latency_us;
  }
  for (const LinkParams& own : mesh.flattened_links()) {
    has_group_links_ = has_group_links_ || own != LinkParams{};
  }
  if (options.kind == CostModelKind::kAlphaBeta) {
    InitAllToAll();
    base_us_ = mesh.base_us().value_or(kBaseLatencyUs);
    copy_us_per_byte_ =
        1e6 / (mesh.copy_gbps().value_or(kLocalBandwidthGBps) * 1e9);
    if (mesh.copy_gbps().has_value()) packing_us_per_byte_ = copy_us_per_byte_;
    reduce_gbps_ = mesh.reduce_gbps();
  }
}

void CostModel::InitAllToAll() {
  const int ndim = mesh_.ndim();
  all_to_all_.assign(size_t{1} << ndim, AllToAllPrice{});
  for (int mask = 1; mask < (1 << ndim); ++mask) {
    std::vector<AllToAllDim> dims;
    double slowest_dim_lat = 0;
    for (int d = 0; d < ndim; ++d) {
      if (!(mask & (1 << d)) || mesh_.size(d) == 1) continue;
      dims.push_back({mesh_.size(d), ab_bw_[d]});
      slowest_dim_lat = std::max(
          slowest_dim_lat, mesh_.links()[d].all_to_all_us.value_or(ab_lat_[d]));
    }
    if (!dims.empty()) {
      all_to_all_[mask] = {GroupAllToAllLatency(mask).value_or(slowest_dim_lat),
                           AllToAllUsPerByte(std::move(dims))};
    }
  }
}

std::optional<double> CostModel::GroupAllToAllLatency(int mask) const {
  std::optional<double> measured;
  for (size_t f = 0; f < mesh_.flattened().size(); ++f) {
    const std::optional<double>& own = mesh_.flattened_links()[f].all_to_all_us;
    if (!own.has_value() || NonUnitMask(mesh_, mesh_.flattened()[f]) != mask) {
      continue;
    }
    measured = std::min(measured.value_or(*own), *own);
  }
  return measured;
}

double CostModel::AllToAllTime(absl::Span<const int> group,
                               int64_t bytes) const {
  const AllToAllPrice& price = all_to_all_[NonUnitMask(mesh_, group)];
  return base_us_ + price.lat_us +
         static_cast<double>(bytes) * price.us_per_byte;
}

// The dims' slowest link, or the serving registered group's own.
GroupLink CostModel::AlphaBetaLink(absl::Span<const int> group) const {
  const GroupLink link = SlowestLink(ab_lat_, ab_bw_, group);
  if (!has_group_links_) return link;
  return WithOwnLink(link, mesh_.FlattenedLink(group));
}

// The fastest link any group over the same dims (size > 1) may have: a
// step's group may be served by a registered group in another order, with
// its own link, so the bound takes the best of them all.
GroupLink CostModel::FastestLinkOver(absl::Span<const int> group) const {
  GroupLink link = SlowestLink(ab_lat_, ab_bw_, group);
  if (!has_group_links_) return link;
  const int mask = NonUnitMask(mesh_, group);
  if (std::popcount(static_cast<unsigned>(mask)) < 2) return link;
  for (size_t f = 0; f < mesh_.flattened().size(); ++f) {
    if (NonUnitMask(mesh_, mesh_.flattened()[f]) != mask) continue;
    const GroupLink own = WithOwnLink(link, mesh_.flattened_links()[f]);
    link.lat = std::min(link.lat, own.lat);
    link.bw = std::max(link.bw, own.bw);
  }
  return link;
}

CostModel::CollectiveBound CostModel::LowerBound(
    absl::Span<const int> group) const {
  const double n = static_cast<double>(mesh_.GroupSize(group));
  if (n <= 1) return {};
  const bool torch = options_.kind == CostModelKind::kTorch;
  const GroupLink link = torch ? SlowestLink(torch_lat_, torch_bw_, group)
                               : FastestLinkOver(group);
  const double bytes_per_gb =
      torch ? kBytesPerGiB * kBytesPerGiB * kBytesPerGiB : 1e9;
  CollectiveBound bound{base_us_, (n - 1) * link.lat,
                        (n - 1) / n / (link.bw * bytes_per_gb) * 1e6};
  if (torch) {  // PyTorch prices an all_to_all as a ring (and 1 µs more)
    bound.all_to_all_us = bound.base_us + bound.hop_us;
    bound.all_to_all_us_per_byte = bound.us_per_byte;
  } else {
    const AllToAllPrice& price = all_to_all_[NonUnitMask(mesh_, group)];
    bound.all_to_all_us = base_us_ + price.lat_us;
    bound.all_to_all_us_per_byte = price.us_per_byte;
  }
  return bound;
}

double CostModel::TorchTime(const DistState& from, const Transition& t) const {
  const int64_t n = mesh_.GroupSize(t.group);
  const GroupLink link = SlowestLink(torch_lat_, torch_bw_, t.group);
  double bytes_gb = static_cast<double>(tensor_.itemsize() * tensor_.numel()) /
                    static_cast<double>(from.NumShards(mesh_)) / kBytesPerGiB /
                    kBytesPerGiB / kBytesPerGiB;
  if (!IsCollective(t.op)) return 0.0;
  if (t.op == StepOp::kAllGather) bytes_gb *= static_cast<double>(n);
  return TorchOpTime(t.op, n, bytes_gb, link);
}

std::pair<int64_t, int64_t> CostModel::PaddedBuffers(
    const DistState& from, const Transition& t,
    absl::Span<const int64_t> ext) const {
  int64_t numel = 1;
  for (int64_t e : ext) numel *= e;
  const int64_t local = tensor_.itemsize() * numel;
  if (IsCollective(t.op)) {
    const int64_t block =
        tensor_.itemsize() * PaddedBlockNumelOf(mesh_, t, ext, numel);
    const WireBlocks blocks =
        CollectiveWireBlocks(t.op, mesh_.GroupSize(t.group));
    return {blocks.in * block, blocks.out * block};
  }
  switch (t.op) {
    case StepOp::kChunk:
      return {local,
              tensor_.itemsize() * PaddedBlockNumelOf(mesh_, t, ext, numel)};
    case StepOp::kShardToPartial: {
      // The output holds the whole extent the group split (extents >= 1).
      const int a = *t.src_tensor_dim;
      DistState popped = from;
      for (int m : t.group) popped.SetReplicate(m);
      const int64_t whole =
          MaxExtent(mesh_, popped, tensor_.shape()[a], a, popped.ShardDepth(a));
      return {local, local / ext[a] * whole};
    }
    default:  // kPartition
      return {local, local};
  }
}

double CostModel::AlphaBetaTime(const DistState& from, const Transition& t,
                                int64_t bytes,
                                absl::Span<const int64_t> extents) const {
  const int64_t n = mesh_.GroupSize(t.group);
  if (n == 1) return 0.0;
  if (!IsCollective(t.op)) {
    if (t.op == StepOp::kPartition && t.target_op != ReduceOp::kSum) return 0.0;
    return static_cast<double>(bytes) * copy_us_per_byte_;
  }
  const double time = CollectiveTime(t.op, t.group, bytes);
  if (packing_us_per_byte_ == 0) return time;
  const int64_t packed =
      PackedElements(mesh_, from, t, tensor_.shape(), extents);
  return time + static_cast<double>(packed * tensor_.itemsize()) *
                    packing_us_per_byte_;
}

double CostModel::CollectiveTime(StepOp op, absl::Span<const int> group,
                                 int64_t bytes) const {
  const int64_t n = mesh_.GroupSize(group);
  if (options_.kind == CostModelKind::kTorch) {
    const GroupLink link = SlowestLink(torch_lat_, torch_bw_, group);
    const double bytes_gb =
        static_cast<double>(bytes) / kBytesPerGiB / kBytesPerGiB / kBytesPerGiB;
    return TorchOpTime(op, n, bytes_gb, link);
  }
  if (n == 1) return 0.0;
  if (op == StepOp::kAllToAll) return AllToAllTime(group, bytes);
  const GroupLink link = AlphaBetaLink(group);
  const double time =
      AlphaBetaCollectiveUs(op, n, bytes, base_us_, link.lat, link.bw);
  if (!reduce_gbps_.has_value()) return time;
  return time + ReductionUs(op, n, bytes, *reduce_gbps_);
}

StepCost CostModel::Price(const DistState& from, const Transition& t) const {
  return PriceWithExtents(from, t,
                          MaxLocalExtents(mesh_, from, tensor_.shape()));
}

StepCost CostModel::PriceWithExtents(const DistState& from, const Transition& t,
                                     absl::Span<const int64_t> extents) const {
  const auto [in, out] = PaddedBuffers(from, t, extents);
  StepCost cost;
  cost.peak_bytes = in + out;
  const int64_t n = mesh_.GroupSize(t.group);
  if (options_.kind == CostModelKind::kTorch) {
    cost.time_us = TorchTime(from, t);
    const int64_t shard_bytes =
        tensor_.itemsize() * tensor_.numel() / from.NumShards(mesh_);
    cost.bytes = IsCollective(t.op) ? shard_bytes : 0;
    if (t.op == StepOp::kAllGather) cost.bytes = shard_bytes * n;
    return cost;
  }
  switch (t.op) {
    case StepOp::kAllGather:
      cost.bytes = out;  // the gathered output
      break;
    case StepOp::kPartition:
      // Only partition to sum writes (zeros); avg/max/min keep the buffer.
      cost.bytes = t.target_op == ReduceOp::kSum ? out : 0;
      break;
    case StepOp::kChunk:
    case StepOp::kShardToPartial:
      cost.bytes = out;  // the output copy
      break;
    default:
      cost.bytes = in;
      break;
  }
  if (n == 1) cost.bytes = 0;
  cost.time_us = AlphaBetaTime(from, t, cost.bytes, extents);
  return cost;
}

}  // namespace reshard
