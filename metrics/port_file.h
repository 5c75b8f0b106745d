// Port files: how a process started on port 0 (tests, local clusters,
// schedulers) tells its launcher the ports it really bound, for gRPC and for
// metrics. Written atomically, so a reader polling for the file never sees
// half a number.
#ifndef RESHARD_METRICS_PORT_FILE_H_
#define RESHARD_METRICS_PORT_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace reshard::metrics {

// OK when `path` is empty or its temporary file can be created (it is
// removed again): checked at start-up, so an unwritable file is refused
// before a launcher starts waiting for it. INVALID_ARGUMENT naming --`flag`.
absl::Status ProbePortFile(absl::string_view flag, const std::string& path);

// Writes `port` to `path` (nothing when empty) atomically, a temporary file
// then a rename; INVALID_ARGUMENT naming --`flag` and the system's reason
// on failure.
absl::Status WritePortFile(absl::string_view flag, const std::string& path,
                           int port);

}  // namespace reshard::metrics

#endif  // RESHARD_METRICS_PORT_FILE_H_
