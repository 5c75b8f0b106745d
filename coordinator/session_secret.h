// An agent's session (docs/DESIGN.md §5, Identity): the secret Join gives
// the joining agent and no one else. Every later call for the rank
// (Dispatch, Report, Progress, the store, Leave) must present it, so a
// client that learns a rank's job, rank and incarnation still cannot act
// for it. 128 random bits from the OS, as 32 hex digits.
#ifndef RESHARD_COORDINATOR_SESSION_SECRET_H_
#define RESHARD_COORDINATOR_SESSION_SECRET_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"
#include "coordinator/membership.h"

namespace reshard::coordinator {

// Makes the session of an agent that joins (`agent`: its identity; a real
// source ignores it, a test's may derive the session from it).
using SessionSource = std::function<std::string(const AgentId& agent)>;

// A fresh session: 128 bits from getrandom(2) as 32 lowercase hex digits.
// Compared with SameSecret (common/same_secret.h).
std::string RandomSession();
// The source the server uses: RandomSession for every join.
SessionSource RandomSessions();

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_SESSION_SECRET_H_
