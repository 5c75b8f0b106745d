#include "planner/cross/cross_cost.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "planner/core/local_layout.h"
#include "planner/cost/cost_model.h"

namespace reshard {
namespace {

// GB/s (1e9 bytes) to bytes per µs.
constexpr double kBytesPerUsPerGBps = 1e3;

// The largest local box under `mid`, or `steps`' peak where it has steps
// and that is larger (a plan of no steps prices a copy through, which a
// rank sending from or receiving into its own buffer does not make).
int64_t RoleBytes(const Mesh& mesh, const DistState& mid,
                  const TensorSpec& tensor, const Plan& steps) {
  const int64_t largest =
      Numel(MaxLocalExtents(mesh, mid, tensor.shape())) * tensor.itemsize();
  return steps.steps.empty() ? largest : std::max(steps.peak_bytes, largest);
}

}  // namespace

LinkParams ResolveCrossLink(const Mesh& src_mesh, const Mesh& dst_mesh,
                            const TensorSpec& tensor,
                            const PlanOptions& options,
                            const LinkParams& given) {
  const CostOptions cost{CostModelKind::kAlphaBeta, options.devices_per_host};
  const GroupLink a = CostModel(src_mesh, tensor, cost).DimLink(0);
  const GroupLink b = CostModel(dst_mesh, tensor, cost).DimLink(0);
  const bool a_slower = a.bw < b.bw || (a.bw == b.bw && a.lat >= b.lat);
  const GroupLink& slower = a_slower ? a : b;
  LinkParams out = given;
  if (!out.bandwidth_gbps.has_value()) out.bandwidth_gbps = slower.bw;
  if (!out.latency_us.has_value()) out.latency_us = slower.lat;
  return out;
}

void AddTransferBytes(const std::vector<Transfer>& transfers, int64_t itemsize,
                      RankLoads& loads) {
  for (const Transfer& t : transfers) {
    const int64_t bytes = t.numel() * itemsize;
    if (t.from == t.to) {
      loads[t.from].self += bytes;
    } else {
      loads[t.from].send += bytes;
      loads[t.to].recv += bytes;
    }
  }
}

double PhaseTimeUs(const RankLoads& loads, const LinkParams& link) {
  const double us_per_byte = 1 / (*link.bandwidth_gbps * kBytesPerUsPerGBps);
  double slowest = 0;
  for (const auto& [rank, bytes] : loads) {
    const int64_t moved = std::max(bytes.send, bytes.recv);
    if (moved > 0) {
      slowest = std::max(slowest, *link.latency_us + moved * us_per_byte);
    }
  }
  return slowest;
}

TransferBytes CountBytes(const RankLoads& loads) {
  TransferBytes out;
  int64_t senders = 0;
  for (const auto& [rank, bytes] : loads) {
    out.max_send = std::max(out.max_send, bytes.send);
    out.max_recv = std::max(out.max_recv, bytes.recv);
    out.total += bytes.send;
    senders += bytes.send > 0 ? 1 : 0;
  }
  out.mean_send = senders > 0 ? static_cast<double>(out.total) / senders : 0;
  return out;
}

TransferBytes CountTransferBytes(const std::vector<Transfer>& transfers,
                                 int64_t itemsize) {
  RankLoads loads;
  AddTransferBytes(transfers, itemsize, loads);
  return CountBytes(loads);
}

double TransferTimeUs(const std::vector<Transfer>& transfers, int64_t itemsize,
                      const LinkParams& link) {
  RankLoads loads;
  AddTransferBytes(transfers, itemsize, loads);
  return PhaseTimeUs(loads, link);
}

int64_t CrossPeakBytes(const Mesh& src_mesh, const Mesh& dst_mesh,
                       const CrossMeshPlan& plan) {
  const int64_t src_role =
      RoleBytes(src_mesh, plan.src_mid, plan.tensor, plan.pre);
  const int64_t dst_role =
      RoleBytes(dst_mesh, plan.dst_mid, plan.tensor, plan.post);
  int64_t peak = dst_role;
  for (int64_t p = 0; p < src_mesh.world_size(); ++p) {
    const bool both = dst_mesh.PositionOfRank(src_mesh.RankAt(p)) >= 0;
    peak = std::max(peak, src_role + (both ? dst_role : 0));
  }
  return peak;
}

}  // namespace reshard
