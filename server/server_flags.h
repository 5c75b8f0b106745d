// What reshard-planner checks when it starts, so that a bad start fails at
// once with a message naming the flag instead of serving something else
// than asked (a registry of 0 meshes, a negative drain) or leaving a
// scheduler waiting for a port file that will never appear.
#ifndef RESHARD_SERVER_SERVER_FLAGS_H_
#define RESHARD_SERVER_SERVER_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "metrics/port_file.h"

namespace reshard::server {

// The start-up flags whose values need checking (the search budgets and
// the Coordinator's limits are checked where they are read).
struct ServerFlags {
  std::string port_file;          // empty: none
  std::string metrics_port_file;  // empty: none
  int64_t cache_entries = 0;      // 0: no plan cache
  int64_t max_meshes = 0;         // >= 1
  int64_t max_batch_items = 0;    // >= 1
  int64_t max_message_bytes = 0;  // >= 65536
  int64_t drain_seconds = 0;      // 0: cancel running calls at once
  // A connection with no call in flight this long is closed (>= 1).
  int64_t max_connection_idle_seconds = 300;
  // Meshes one credential may have registered (>= 1).
  int64_t max_meshes_per_credential = 250;
  // Byte counts (common/byte_size.h: "16MiB" or digits); the Coordinator
  // checks the store's, the planning options the search's.
  int64_t max_search_bytes = 0;
  int64_t max_store_bytes_per_job = 0;
  int64_t max_store_bytes_per_credential = 0;
  int64_t max_store_bytes_total = 0;
};

// Longest drain a SIGTERM may wait for.
inline constexpr int64_t kMaxDrainSeconds = 24 * 3600;

// OK, or INVALID_ARGUMENT whose message starts with the flag and its value
// (`--max_meshes=0: must be in [1, ...] ...`). A set --port_file or
// --metrics_port_file must be writable: its temporary file is created and
// removed once to find out.
absl::Status ValidateServerFlags(const ServerFlags& flags);

// Flag `name`'s byte count `text` (common/byte_size.h: "16MiB", "65536");
// INVALID_ARGUMENT "--NAME=TEXT: ..." saying the form otherwise.
absl::StatusOr<int64_t> ParseByteFlag(absl::string_view name,
                                      absl::string_view text);

// Whether `address` (--listen's form, HOST:PORT) is reachable only from
// this host: a 127.0.0.0/8 address, [::1] or localhost.
bool ListensOnLoopbackOnly(const std::string& address);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_SERVER_FLAGS_H_
