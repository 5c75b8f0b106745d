#include "agent/memory_capacity.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/numbers.h"

namespace reshard::agent {

int64_t HostMemoryBytes(const std::string& cgroup_max_file) {
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) *
                           static_cast<int64_t>(sysconf(_SC_PAGE_SIZE));
  std::ifstream in(cgroup_max_file);
  std::string text;
  int64_t limit = 0;
  if (in >> text && absl::SimpleAtoi(text, &limit) && limit > 0) {
    return std::min(physical, limit);
  }
  return physical;
}

}  // namespace reshard::agent
