// Ring factors of the four collectives (docs/DESIGN.md §3.3, §6.3): the α-β
// model charges `RingHops` link latencies and `BusBandwidthFactor` times the
// buffer over the slowest link, and executors report busbw = algbw × the
// same factor, as nccl-tests does. One home for both, so a measured busbw
// and a modelled time describe the same ring.
#ifndef RESHARD_PLANNER_COLLECTIVE_FACTORS_H_
#define RESHARD_PLANNER_COLLECTIVE_FACTORS_H_

#include <cstdint>

#include "planner/step.h"

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

// The α-β time, in µs, of `op` on `n` > 1 members moving `bytes` (counted
// as StepCost::bytes counts them) over a link of `latency_us` per hop and
// `bandwidth_gbps`: a base latency, RingHops hops and BusBandwidthFactor
// times the bytes at the link's bandwidth. The cost model prices every
// collective by it and calibration (link_fit.h) fits links to it.
inline double AlphaBetaCollectiveUs(StepOp op, int64_t n, int64_t bytes,
                                    double base_latency_us, double latency_us,
                                    double bandwidth_gbps) {
  return base_latency_us + static_cast<double>(RingHops(op, n)) * latency_us +
         BusBandwidthFactor(op, n) * static_cast<double>(bytes) /
             (bandwidth_gbps * 1e9) * 1e6;
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_COLLECTIVE_FACTORS_H_
