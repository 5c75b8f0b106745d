#include "common/open_file_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

// The most a soft limit may be when the hard limit is RLIM_INFINITY.
rlim_t KernelMaxOpenFiles() {
  std::ifstream in("/proc/sys/fs/nr_open");
  rlim_t most = 0;
  if (in >> most && most > 0) return most;
  return 1 << 20;  // the kernel's default nr_open
}

}  // namespace

absl::StatusOr<OpenFileLimit> RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(
        absl::StrCat("getrlimit(RLIMIT_NOFILE): ", std::strerror(errno)));
  }
  OpenFileLimit result;
  result.soft_before = static_cast<int64_t>(limit.rlim_cur);
  const rlim_t target =
      limit.rlim_max == RLIM_INFINITY ? KernelMaxOpenFiles() : limit.rlim_max;
  if (limit.rlim_cur < target) {
    limit.rlim_cur = target;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      return absl::InternalError(absl::StrCat(
          "setrlimit(RLIMIT_NOFILE, ", target, "): ", std::strerror(errno)));
    }
  }
  result.soft = static_cast<int64_t>(limit.rlim_cur);
  result.hard = static_cast<int64_t>(limit.rlim_max);
  return result;
}

}  // namespace reshard
