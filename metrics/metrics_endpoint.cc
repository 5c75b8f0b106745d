#include "metrics/metrics_endpoint.h"

#include <exception>
#include <utility>

#include "CivetServer.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "prometheus/client_metric.h"

namespace reshard::metrics {
namespace {

// civetweb says why it cannot start (e.g. "cannot bind to 127.0.0.1:80: 13
// (Permission denied)") only to its log callback, on the starting thread.
thread_local std::string* civetweb_start_error = nullptr;

int KeepStartError(const mg_connection*, const char* message) {
  if (civetweb_start_error == nullptr) return 0;  // civetweb's default
  if (civetweb_start_error->empty()) *civetweb_start_error = message;
  return 1;
}

}  // namespace

void ScrapeReadings::AddGauge(const std::string& name, const std::string& help,
                              prometheus::Labels labels, Reader read) {
  Add(prometheus::MetricType::Gauge, name, help, std::move(labels),
      std::move(read));
}

void ScrapeReadings::AddCounter(const std::string& name,
                                const std::string& help,
                                prometheus::Labels labels, Reader read) {
  Add(prometheus::MetricType::Counter, name, help, std::move(labels),
      std::move(read));
}

void ScrapeReadings::Add(prometheus::MetricType type, const std::string& name,
                         const std::string& help, prometheus::Labels labels,
                         Reader read) {
  absl::MutexLock lock(&mu_);
  for (Family& family : families_) {
    if (family.name == name) {
      family.series.push_back({std::move(labels), std::move(read)});
      return;
    }
  }
  families_.push_back(
      {name, help, type, {Series{std::move(labels), std::move(read)}}});
}

std::vector<prometheus::MetricFamily> ScrapeReadings::Collect() const {
  absl::MutexLock lock(&mu_);
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families_.size());
  for (const Family& family : families_) {
    prometheus::MetricFamily& metric_family = out.emplace_back();
    metric_family.name = family.name;
    metric_family.help = family.help;
    metric_family.type = family.type;
    for (const Series& series : family.series) {
      prometheus::ClientMetric& metric = metric_family.metric.emplace_back();
      for (const auto& [label, value] : series.labels) {
        metric.label.push_back({label, value});
      }
      const double value = series.read();
      if (family.type == prometheus::MetricType::Counter) {
        metric.counter.value = value;
      } else {
        metric.gauge.value = value;
      }
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address,
    std::shared_ptr<prometheus::Registry> registry) {
  CivetCallbacks callbacks;
  callbacks.log_message = KeepStartError;
  std::string error;
  civetweb_start_error = &error;
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // Two HTTP threads: a Prometheus server and a person with curl.
    exposer = std::make_unique<prometheus::Exposer>(address, 2, &callbacks);
  } catch (const std::exception& e) {
    if (error.empty()) error = e.what();
  }
  civetweb_start_error = nullptr;
  if (exposer == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on \"", address, "\": ", error));
  }
  auto endpoint = std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(std::move(exposer), std::move(registry)));
  endpoint->readings().AddGauge(
      "reshard_build_info", "Always 1; the version of this binary as a label",
      {{"version", kReshardVersion}}, [] { return 1.0; });
  return endpoint;
}

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                                 std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)),
      readings_(std::make_shared<ScrapeReadings>()),
      exposer_(std::move(exposer)) {
  exposer_->RegisterCollectable(registry_);
  exposer_->RegisterCollectable(readings_);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  if (!ports.empty()) port_ = ports.front();
}

MetricsEndpoint::~MetricsEndpoint() { exposer_.reset(); }

}  // namespace reshard::metrics
