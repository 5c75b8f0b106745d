// A process's Prometheus endpoint: /metrics over HTTP (prometheus-cpp's
// Exposer on civetweb) serving one registry of metrics recorded on the hot
// path plus ScrapeReadings, figures read from the objects that own them at
// each scrape (cache size, registry size, drain state, ...), so the core
// libraries never link prometheus and nothing polls. The planner (with the
// Coordinator) and reshard-agent each serve one on --metrics_listen.
#ifndef RESHARD_METRICS_METRICS_ENDPOINT_H_
#define RESHARD_METRICS_METRICS_ENDPOINT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"
#include "prometheus/labels.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"
#include "prometheus/registry.h"

namespace reshard::metrics {

// A Collectable whose samples are computed at collection time by callbacks.
// Series added under one name form one family (same help and type); each
// series has its own labels and reader. Readers run on the HTTP server's
// threads, so they must be thread-safe and cheap (a lock and a size()).
// Thread-safe.
class ScrapeReadings final : public prometheus::Collectable {
 public:
  using Reader = std::function<double()>;

  // A gauge series: `read` gives its current value.
  void AddGauge(const std::string& name, const std::string& help,
                prometheus::Labels labels, Reader read);
  // A counter series (`name` ends in _total): `read` must never decrease
  // while the process lives.
  void AddCounter(const std::string& name, const std::string& help,
                  prometheus::Labels labels, Reader read);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Series {
    prometheus::Labels labels;
    Reader read;
  };
  struct Family {
    std::string name;
    std::string help;
    prometheus::MetricType type;
    std::vector<Series> series;
  };
  void Add(prometheus::MetricType type, const std::string& name,
           const std::string& help, prometheus::Labels labels, Reader read);

  mutable absl::Mutex mu_;
  std::vector<Family> families_ ABSL_GUARDED_BY(mu_);
};

// Serves `registry` and readings() on one address until destroyed. The
// destructor stops the HTTP server (waiting for a scrape in progress) before
// anything else, so an endpoint must be destroyed before the objects its
// readings read: declare it after them.
class MetricsEndpoint {
 public:
  // Listens on `address` ("IP:PORT" or "PORT"; port 0 picks a free one) and
  // adds reshard_build_info. UNAVAILABLE naming the address when it cannot
  // listen (in use, not a local address, malformed).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address,
      std::shared_ptr<prometheus::Registry> registry);
  ~MetricsEndpoint();

  // The bound port (the real one when `address` asked for port 0).
  int port() const { return port_; }
  ScrapeReadings& readings() { return *readings_; }

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                  std::shared_ptr<prometheus::Registry> registry);

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ScrapeReadings> readings_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace reshard::metrics

#endif  // RESHARD_METRICS_METRICS_ENDPOINT_H_
