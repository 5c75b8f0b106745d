#include "executor/backends/nccl/shared_gpu.h"

#include <stdlib.h>

namespace reshard::executor {

std::vector<std::pair<std::string, std::string>> SharedGpuEnvironment(
    const std::string& host_id) {
  return {{"NCCL_HOSTID", host_id},
          {"NCCL_P2P_DISABLE", "1"},
          {"NCCL_SHM_DISABLE", "1"},
          {"NCCL_IB_DISABLE", "1"},
          {"NCCL_SOCKET_IFNAME", "lo"}};
}

void ShareGpu(const std::string& host_id) {
  for (const auto& [name, value] : SharedGpuEnvironment(host_id)) {
    setenv(name.c_str(), value.c_str(), 1);
  }
}

}  // namespace reshard::executor
