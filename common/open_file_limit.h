// The process's open-file limit (RLIMIT_NOFILE). gRPC 1.51 stops accepting
// on a listening socket for good once accept() fails with EMFILE (its
// tcp_server_posix.cc does not re-arm the listener; docs/DESIGN.md §5,
// Connections), so the servers raise their soft limit to the hard one at
// start: a flood of connections past the usual soft limit of 1024 then
// never reaches EMFILE while the hard limit has room.
#ifndef RESHARD_COMMON_OPEN_FILE_LIMIT_H_
#define RESHARD_COMMON_OPEN_FILE_LIMIT_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace reshard {

struct OpenFileLimit {
  int64_t soft_before = 0;
  int64_t soft = 0;  // after raising
  int64_t hard = 0;
};

// Raises the soft limit to the hard limit (capped at the kernel's
// nr_open when the hard limit is unlimited). INTERNAL naming the call
// when the limit cannot be read or set.
absl::StatusOr<OpenFileLimit> RaiseOpenFileLimit();

}  // namespace reshard

#endif  // RESHARD_COMMON_OPEN_FILE_LIMIT_H_
