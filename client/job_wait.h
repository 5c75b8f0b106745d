// What `reshardctl job run` says while its RunJob waits for the job's
// agents (docs/DESIGN.md §5): at once and then every few seconds, on
// stderr, which ranks are not connected, so a user does not stare at a
// silent terminal until the deadline. It asks the job's state on a client
// of its own (GetJob), beside the RunJob call, and says nothing while
// every rank is connected.
#ifndef RESHARD_CLIENT_JOB_WAIT_H_
#define RESHARD_CLIENT_JOB_WAIT_H_

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "common/periodic_task.h"
#include "reshard/client.h"

namespace reshard::client {

// "job jt: waiting for rank 2 (not connected) and rank 3 (never joined)";
// "" when every rank of the job is connected.
std::string WaitingFor(const JobInfo& job);

class JobWaitReporter {
 public:
  // Starts asking about `job` through `client`, at once and every `period`.
  JobWaitReporter(std::unique_ptr<Client> client, std::string job,
                  std::ostream& out, absl::Duration period = absl::Seconds(3));
  // Stops asking (after the GetJob in flight, if any, which the client's
  // deadline bounds).
  ~JobWaitReporter() = default;

 private:
  bool Tick();

  std::unique_ptr<Client> client_;
  const std::string job_;
  std::ostream& out_;
  PeriodicTask task_;  // last: stopped before the members it uses go
};

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_JOB_WAIT_H_
