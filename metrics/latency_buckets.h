// Bucket bounds shared by every latency histogram of Reshard's processes
// (plan and RPC latency on the planner, collective durations on the agents),
// so dashboards and recording rules can treat them alike.
#ifndef RESHARD_METRICS_LATENCY_BUCKETS_H_
#define RESHARD_METRICS_LATENCY_BUCKETS_H_

#include <vector>

namespace reshard::metrics {

// Seconds: a 1-2.5-5 ladder from 1 µs (a cached plan, a tiny collective) to
// 10 s (a search at its budget, a large transfer), 22 buckets.
std::vector<double> LatencyBuckets();

}  // namespace reshard::metrics

#endif  // RESHARD_METRICS_LATENCY_BUCKETS_H_
