// Who takes part in a job (docs/DESIGN.md §5): agents identified by job, rank
// and incarnation (fresh per agent process), joining with their world size,
// backend and version. Plain values; the Job owns the state.
#ifndef RESHARD_COORDINATOR_MEMBERSHIP_H_
#define RESHARD_COORDINATOR_MEMBERSHIP_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace reshard::coordinator {

enum class Backend { kGloo, kNccl };

absl::string_view BackendName(Backend backend);

struct AgentId {
  std::string job;
  int64_t rank = 0;
  uint64_t incarnation = 0;
};

struct JoinInfo {
  AgentId agent;
  int64_t world_size = 0;
  Backend backend = Backend::kGloo;
  std::string version;  // the agent's Reshard version
  int protocol = 0;     // the Coordinator protocol it speaks
  std::string host;
};

// One rank's slot in a job, as GetJob shows it.
struct AgentInfo {
  int64_t rank = 0;
  uint64_t incarnation = 0;
  std::string version;
  std::string host;
  bool connected = false;  // its dispatch stream is open
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_MEMBERSHIP_H_
