#include "server/server_flags.h"

#include <arpa/inet.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/byte_size.h"

namespace reshard::server {
namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// INVALID_ARGUMENT "--`flag`=`value`: must be in [lo, hi] (`what`)", or OK.
absl::Status CheckRange(absl::string_view flag, int64_t value, int64_t lo,
                        int64_t hi, absl::string_view what) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value,
                                                 ": must be in [", lo, ", ", hi,
                                                 "] (", what, ")"));
}

}  // namespace

absl::Status ValidateServerFlags(const ServerFlags& flags) {
  for (const absl::Status& status :
       {CheckRange("cache_entries", flags.cache_entries, 0, kIntMax,
                   "plans kept in the cache; 0 turns the cache off"),
        CheckRange("max_meshes", flags.max_meshes, 1, kIntMax,
                   "meshes the registry holds"),
        CheckRange("max_meshes_per_credential", flags.max_meshes_per_credential,
                   1, kIntMax,
                   "meshes one job token (or none) may have registered"),
        CheckRange("max_batch_items", flags.max_batch_items, 1, kIntMax,
                   "items in one PlanBatch"),
        CheckRange("max_message_bytes", flags.max_message_bytes, 65536, kIntMax,
                   "bytes in one request or response"),
        CheckRange("drain_seconds", flags.drain_seconds, 0, kMaxDrainSeconds,
                   "seconds SIGTERM waits for running calls; 0 cancels "
                   "them at once"),
        CheckRange("max_connection_idle_seconds",
                   flags.max_connection_idle_seconds, 1, kMaxDrainSeconds,
                   "seconds a connection with no call in flight stays open"),
        metrics::ProbePortFile("port_file", flags.port_file),
        metrics::ProbePortFile("metrics_port_file", flags.metrics_port_file)}) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseByteFlag(absl::string_view name,
                                      absl::string_view text) {
  absl::StatusOr<int64_t> bytes = ParseByteSize(text);
  if (bytes.ok()) return bytes;
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, "=", text, ": ", bytes.status().message()));
}

bool ListensOnLoopbackOnly(const std::string& address) {
  absl::string_view host = address;
  if (absl::ConsumePrefix(&host, "[")) {
    host = host.substr(0, host.find(']'));
  } else if (const size_t colon = host.rfind(':');
             colon != absl::string_view::npos) {
    host = host.substr(0, colon);
  }
  if (host == "localhost" || host == "::1") return true;
  in_addr ipv4{};
  return inet_pton(AF_INET, std::string(host).c_str(), &ipv4) == 1 &&
         (ntohl(ipv4.s_addr) >> 24) == 127;
}

}  // namespace reshard::server
