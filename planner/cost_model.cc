#include "planner/cost_model.h"

#include <algorithm>
#include <limits>

#include "planner/local_layout.h"

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

}  // namespace

absl::string_view CostModelName(CostModelKind kind) {
  return kind == CostModelKind::kTorch ? "torch" : "alpha_beta";
}

std::optional<CostModelKind> ParseCostModel(absl::string_view name) {
  if (name == "alpha_beta") return CostModelKind::kAlphaBeta;
  if (name == "torch") return CostModelKind::kTorch;
  return std::nullopt;
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
}

CostModel::CollectiveBound CostModel::LowerBound(
    absl::Span<const int> group) const {
  const bool torch = options_.kind == CostModelKind::kTorch;
  double lat = 0;
  double bw = std::numeric_limits<double>::infinity();
  double n = 1;
  for (int m : group) {
    lat = std::max(lat, torch ? torch_lat_[m] : ab_lat_[m]);
    bw = std::min(
        bw, torch ? torch_bw_[m] * kBytesPerGiB * kBytesPerGiB * kBytesPerGiB
                  : ab_bw_[m] * 1e9);
    n *= static_cast<double>(mesh_.size(m));
  }
  if (n <= 1) return {};
  return {kBaseLatencyUs, (n - 1) * lat, (n - 1) / n / bw * 1e6};
}

double CostModel::LocalCopyUsPerByte() const {
  if (options_.kind == CostModelKind::kTorch) return 0.0;
  return 1e6 / (kLocalBandwidthGBps * 1e9);
}

double CostModel::TorchTime(const DistState& from, const Transition& t) const {
  const int64_t n = mesh_.GroupSize(t.group);
  double lat = 0;
  double bw = torch_bw_[t.group[0]];
  for (int m : t.group) {
    lat = std::max(lat, torch_lat_[m]);
    bw = std::min(bw, torch_bw_[m]);
  }
  double bytes_gb = static_cast<double>(tensor_.itemsize() * tensor_.numel()) /
                    static_cast<double>(from.NumShards(mesh_)) / kBytesPerGiB /
                    kBytesPerGiB / kBytesPerGiB;
  switch (t.op) {
    case StepOp::kAllGather:
      bytes_gb *= static_cast<double>(n);
      return TorchCollective(bytes_gb, n, n - 1, lat, bw);
    case StepOp::kAllToAll:
      return TorchCollective(bytes_gb, n, n - 1, lat, bw) + 1.0;
    case StepOp::kAllReduce:
      return TorchCollective(bytes_gb, n, 2 * (n - 1), lat, bw);
    case StepOp::kReduceScatter:
      return TorchCollective(bytes_gb, n, n - 1, lat, bw);
    case StepOp::kChunk:
    case StepOp::kPartition:
    case StepOp::kShardToPartial:
      return 0.0;
  }
  return 0.0;
}

std::pair<int64_t, int64_t> CostModel::PaddedBuffers(
    const DistState& from, const Transition& t,
    absl::Span<const int64_t> ext) const {
  const int64_t n = mesh_.GroupSize(t.group);
  // Nested padded block of `extent` split over the group's dims.
  auto block_over_group = [&](int64_t extent) {
    for (int m : t.group) extent = (extent + mesh_.size(m) - 1) / mesh_.size(m);
    return extent;
  };
  // Extents are >= 1, so the products below divide exactly.
  int64_t local = tensor_.itemsize();
  for (int64_t e : ext) local *= e;
  auto product_except = [&](std::initializer_list<int> skip) {
    int64_t p = local;
    for (int d : skip) p /= ext[d];
    return p;
  };
  switch (t.op) {
    case StepOp::kAllGather: {
      const int a = *t.src_tensor_dim;
      const int64_t in = ext[a] * product_except({a});
      return {in, n * in};
    }
    case StepOp::kReduceScatter: {
      const int b = *t.dst_tensor_dim;
      const int64_t out = block_over_group(ext[b]) * product_except({b});
      return {n * out, out};
    }
    case StepOp::kAllReduce:
      return {local, local};
    case StepOp::kAllToAll: {
      const int a = *t.src_tensor_dim;
      const int b = *t.dst_tensor_dim;
      const int64_t rest = product_except({a, b});
      const int64_t block_b = block_over_group(ext[b]);
      return {ext[a] * n * block_b * rest, n * ext[a] * block_b * rest};
    }
    case StepOp::kChunk: {
      const int b = *t.dst_tensor_dim;
      return {local, block_over_group(ext[b]) * product_except({b})};
    }
    case StepOp::kPartition:
      return {local, local};
    case StepOp::kShardToPartial: {
      // The output holds the whole extent the group split.
      const int a = *t.src_tensor_dim;
      DistState popped = from;
      for (int m : t.group) popped.SetReplicate(m);
      const int64_t whole =
          MaxExtent(mesh_, popped, tensor_.shape()[a], a, popped.ShardDepth(a));
      return {local, whole * product_except({a})};
    }
  }
  return {local, local};
}

int64_t CostModel::LocalBytes(const DistState& state) const {
  int64_t bytes = tensor_.itemsize();
  for (int64_t e : MaxLocalExtents(mesh_, state, tensor_.shape())) bytes *= e;
  return bytes;
}

double CostModel::AlphaBetaTime(const DistState& from, const Transition& t,
                                int64_t bytes) const {
  (void)from;
  const int64_t n = mesh_.GroupSize(t.group);
  if (n == 1) return 0.0;
  if (!IsCollective(t.op)) {
    if (t.op == StepOp::kPartition && t.target_op != ReduceOp::kSum) return 0.0;
    return static_cast<double>(bytes) / (kLocalBandwidthGBps * 1e9) * 1e6;
  }
  double lat = 0;
  double bw = ab_bw_[t.group[0]];
  for (int m : t.group) {
    lat = std::max(lat, ab_lat_[m]);
    bw = std::min(bw, ab_bw_[m]);
  }
  const double nd = static_cast<double>(n);
  double hops = nd - 1;
  double factor = (nd - 1) / nd;
  if (t.op == StepOp::kAllReduce) {
    hops = 2 * (nd - 1);
    factor = 2 * (nd - 1) / nd;
  }
  return kBaseLatencyUs + hops * lat +
         factor * static_cast<double>(bytes) / (bw * 1e9) * 1e6;
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
  cost.time_us = AlphaBetaTime(from, t, cost.bytes);
  return cost;
}

}  // namespace reshard
