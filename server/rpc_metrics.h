// Per-method gRPC metrics of docs/DESIGN.md §7 for any service in this process:
// reshard_rpc_requests_total{method,code} and
// reshard_rpc_duration_seconds{method}. The Planner records through it today;
// a Coordinator in the same process builds its own RpcMetrics on the same
// prometheus::Registry (the registry merges families of the same name, so
// both share the two families and differ by `method`).
//
// The hot path touches only prometheus-cpp's own atomics: every series is
// resolved once (per method at set-up, per status code on its first use) and
// cached as a pointer, so recording is a pointer load, a counter increment
// and a histogram observation — never a label lookup.
#ifndef RESHARD_SERVER_RPC_METRICS_H_
#define RESHARD_SERVER_RPC_METRICS_H_

#include <array>
#include <atomic>
#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "metrics/latency_buckets.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace reshard::server {

// One counter per absl::StatusCode under fixed labels plus
// `code="<absl::StatusCodeToString>"`. The OK series exists from the start
// (rates need it before the first call); the others appear on first use, so
// a scrape lists only codes that happened. Thread-safe.
class StatusCodeCounters {
 public:
  StatusCodeCounters(prometheus::Family<prometheus::Counter>& family,
                     prometheus::Labels labels);
  StatusCodeCounters(const StatusCodeCounters&) = delete;
  StatusCodeCounters& operator=(const StatusCodeCounters&) = delete;

  void Increment(absl::StatusCode code) { Get(code).Increment(); }

 private:
  // absl::StatusCode's values 0..16; anything else counts as UNKNOWN.
  static constexpr int kCodes = 17;
  prometheus::Counter& Get(absl::StatusCode code) {
    const int index = static_cast<int>(code);
    if (index < 0 || index >= kCodes) return Get(absl::StatusCode::kUnknown);
    prometheus::Counter* counter =
        counters_[index].load(std::memory_order_acquire);
    return counter != nullptr ? *counter : Create(code);
  }
  // Adds the series (Family::Add returns the existing one when two threads
  // race) and caches it.
  prometheus::Counter& Create(absl::StatusCode code);

  prometheus::Family<prometheus::Counter>& family_;
  const prometheus::Labels labels_;
  std::array<std::atomic<prometheus::Counter*>, kCodes> counters_{};
};

// The series of one RPC method.
class RpcMethodMetrics {
 public:
  RpcMethodMetrics(prometheus::Family<prometheus::Counter>& requests,
                   prometheus::Family<prometheus::Histogram>& durations,
                   const std::string& method);

  // One finished call: its status code and the seconds the handler took.
  void Record(absl::StatusCode code, double seconds) {
    requests_.Increment(code);
    duration_.Observe(seconds);
  }

 private:
  StatusCodeCounters requests_;
  prometheus::Histogram& duration_;
};

// The two RPC families on a registry, and the methods' series.
// Method() is for set-up (it locks); the returned reference stays valid as
// long as this object.
class RpcMetrics {
 public:
  explicit RpcMetrics(prometheus::Registry& registry);

  // The series of `method` (a gRPC method name, e.g. "Plan"), created on the
  // first call for that name.
  RpcMethodMetrics& Method(const std::string& method);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& durations_;
  absl::Mutex mu_;
  std::deque<std::pair<std::string, RpcMethodMetrics>> methods_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_RPC_METRICS_H_
