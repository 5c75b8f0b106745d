// Factors of the four collectives (docs/DESIGN.md §3.3, §6.3): the α-β
// model charges latency rounds (a ring's hops; one for all_to_all) and
// `BusBandwidthFactor` times the buffer over the link, and executors report
// busbw = algbw × the same factor, as nccl-tests does. One home for both,
// so a measured busbw and a modelled time describe the same collective.
#ifndef RESHARD_PLANNER_COST_COLLECTIVE_FACTORS_H_
#define RESHARD_PLANNER_COST_COLLECTIVE_FACTORS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/core/step.h"

namespace reshard {

// Latency hops of a ring over `n` members: n-1, all_reduce 2(n-1). Zero for
// local steps.
inline int64_t RingHops(StepOp op, int64_t n) {
  if (!IsCollective(op)) return 0;
  return op == StepOp::kAllReduce ? 2 * (n - 1) : n - 1;
}

// nccl-tests' busbw factor: (n-1)/n of the buffer (the gathered output, the
// reduce_scatter input, the all_to_all buffer), all_reduce 2(n-1)/n. Zero
// for local steps and groups of size 1.
inline double BusBandwidthFactor(StepOp op, int64_t n) {
  return static_cast<double>(RingHops(op, n)) / static_cast<double>(n);
}

// The share of a collective's buffer (counted as StepCost::bytes counts it)
// each member reduces: a ring reduce_scatter adds each of the n-1 blocks
// it receives into its own, (n-1)/n of the input; an all_reduce does the
// same in its reduce_scatter half. Zero for the other ops. On CPUs the
// reduction costs time the links do not explain (Mesh::reduce_gbps).
inline double ReducedFactor(StepOp op, int64_t n) {
  if (op != StepOp::kReduceScatter && op != StepOp::kAllReduce) return 0;
  return static_cast<double>(n - 1) / static_cast<double>(n);
}

// The time, in µs, `op` on `n` members spends reducing `bytes` of buffer
// at `reduce_gbps` (Mesh::reduce_gbps): what the cost model adds to a
// collective's links and calibration takes off before fitting them.
inline double ReductionUs(StepOp op, int64_t n, int64_t bytes,
                          double reduce_gbps) {
  return ReducedFactor(op, n) * static_cast<double>(bytes) /
         (reduce_gbps * 1e9) * 1e6;
}

// Latency rounds of `op` on `n` members under the α-β model: a ring's hops,
// but one round for all_to_all, whose sends to every member are in flight
// at once (measured: an 8-rank all_to_all's small sizes take a third of an
// 8-rank all_gather's, docs/notes/2026-11-28-all-to-all-shape.md "The
// all_to_all shape"); a group's measured all_to_all latency
// (LinkParams::all_to_all_us) replaces that round's in the cost model.
inline int64_t LatencyRounds(StepOp op, int64_t n) {
  if (op == StepOp::kAllToAll) return n > 1 ? 1 : 0;
  return RingHops(op, n);
}

// The α-β time, in µs, of `op` on `n` > 1 members moving `bytes` (counted
// as StepCost::bytes counts them) over one link of `latency_us` per round
// and `bandwidth_gbps`: a base latency, LatencyRounds rounds and
// BusBandwidthFactor times the bytes at the link's bandwidth. The cost
// model prices every collective over one link by it and calibration
// (link_fit.h) fits links to it.
inline double AlphaBetaCollectiveUs(StepOp op, int64_t n, int64_t bytes,
                                    double base_latency_us, double latency_us,
                                    double bandwidth_gbps) {
  return base_latency_us +
         static_cast<double>(LatencyRounds(op, n)) * latency_us +
         BusBandwidthFactor(op, n) * static_cast<double>(bytes) /
             (bandwidth_gbps * 1e9) * 1e6;
}

// One dim of an all_to_all's group: its size and its link's bandwidth.
struct AllToAllDim {
  int64_t size = 1;
  double bandwidth_gbps = 1;
};

// µs per buffer byte of an all_to_all over dims whose links differ. Each
// rank sends bytes/n to every other member, over the slowest link among
// the dims where their coordinates differ; what each link carries adds up
// (one sender). With the dims slowest first, dim i carries
// (s_i − 1)·Π_{j>i} s_j / n of the buffer. Over one link the shares sum to
// (n−1)/n, BusBandwidthFactor's; over two tiers most of the bytes cross the
// slow one, but not all (docs/DESIGN.md §3.3).
inline double AllToAllUsPerByte(std::vector<AllToAllDim> dims) {
  std::stable_sort(dims.begin(), dims.end(),
                   [](const AllToAllDim& a, const AllToAllDim& b) {
                     return a.bandwidth_gbps < b.bandwidth_gbps;
                   });
  double n = 1;
  for (const AllToAllDim& d : dims) n *= static_cast<double>(d.size);
  double us_per_byte = 0;
  double faster = n;  // the product of the sizes from dim i on
  for (const AllToAllDim& d : dims) {
    const double size = static_cast<double>(d.size);
    faster /= size;
    us_per_byte += (size - 1) * faster / n / (d.bandwidth_gbps * 1e9) * 1e6;
  }
  return us_per_byte;
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_COLLECTIVE_FACTORS_H_
