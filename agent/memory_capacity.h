// How much memory this process may use, for the agent's --max_run_bytes
// auto bound: the machine's physical memory, or less where the process's
// cgroup (a container's memory limit) caps it.
#ifndef RESHARD_AGENT_MEMORY_CAPACITY_H_
#define RESHARD_AGENT_MEMORY_CAPACITY_H_

#include <cstdint>
#include <string>

namespace reshard::agent {

// The smaller of the physical memory and the cgroup v2 limit read from
// `cgroup_max_file` (its "max" or a missing file: no limit).
int64_t HostMemoryBytes(
    const std::string& cgroup_max_file = "/sys/fs/cgroup/memory.max");

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_MEMORY_CAPACITY_H_
