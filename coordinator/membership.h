// Who takes part in a job (docs/DESIGN.md §5): agents identified by job, rank
// and incarnation (fresh per agent process), joining with their world size,
// backend and version, and proving who they are by the session Join gave
// them (coordinator/session_secret.h). Plain values; the Job owns the
// state.
#ifndef RESHARD_COORDINATOR_MEMBERSHIP_H_
#define RESHARD_COORDINATOR_MEMBERSHIP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "run_values/backend.h"

namespace reshard::coordinator {

struct AgentId {
  std::string job;
  int64_t rank = 0;
  uint64_t incarnation = 0;
  std::string session;  // from Join; empty on a first Join
};

// What a Join gives the joining agent: the job's generation after it, and
// the agent's session, which every later call for the rank presents.
struct Joined {
  int64_t generation = 0;
  std::string session;
};

struct JoinInfo {
  AgentId agent;
  int64_t world_size = 0;
  Backend backend = Backend::kGloo;
  std::string version;  // the agent's Reshard version
  int protocol = 0;     // the Coordinator protocol it speaks
  std::string host;
  // What the agent can do beyond generated-data runs (JoinRequest's):
  // kRegisteredTensors (common/tensor_name.h).
  std::vector<std::string> capabilities;
};

// One rank's slot in a job, as GetJob shows it: no incarnation and no
// session (who holds a rank is not anyone's business but the holder's).
struct AgentInfo {
  int64_t rank = 0;
  std::string version;
  std::string host;
  bool connected = false;  // its dispatch stream is open
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_MEMBERSHIP_H_
