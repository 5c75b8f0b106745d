#include "server/rpc_metrics.h"

#include <tuple>
#include <utility>

namespace reshard::server {

StatusCodeCounters::StatusCodeCounters(
    prometheus::Family<prometheus::Counter>& family, prometheus::Labels labels)
    : family_(family), labels_(std::move(labels)) {
  Create(absl::StatusCode::kOk);
}

prometheus::Counter& StatusCodeCounters::Create(absl::StatusCode code) {
  prometheus::Labels labels = labels_;
  labels["code"] = absl::StatusCodeToString(code);
  prometheus::Counter* counter = &family_.Add(labels);
  counters_[static_cast<int>(code)].store(counter, std::memory_order_release);
  return *counter;
}

RpcMethodMetrics::RpcMethodMetrics(
    prometheus::Family<prometheus::Counter>& requests,
    prometheus::Family<prometheus::Histogram>& durations,
    const std::string& method)
    : requests_(requests, {{"method", method}}),
      duration_(
          durations.Add({{"method", method}}, metrics::LatencyBuckets())) {}

RpcMetrics::RpcMetrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("reshard_rpc_requests_total")
                    .Help("gRPC calls finished, by method and status code")
                    .Register(registry)),
      durations_(prometheus::BuildHistogram()
                     .Name("reshard_rpc_duration_seconds")
                     .Help("Time from a call's arrival in its handler to its "
                           "status, by method")
                     .Register(registry)) {}

RpcMethodMetrics& RpcMetrics::Method(const std::string& method) {
  absl::MutexLock lock(&mu_);
  for (auto& [name, metrics] : methods_) {
    if (name == method) return metrics;
  }
  return methods_
      .emplace_back(std::piecewise_construct, std::forward_as_tuple(method),
                    std::forward_as_tuple(requests_, durations_, method))
      .second;
}

}  // namespace reshard::server
