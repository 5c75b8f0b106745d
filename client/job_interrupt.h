// Ctrl-C during `reshardctl job run`: while the RunJob call waits, a thread
// watches client/interrupt.h's flag and, once it is set, asks the job's
// Coordinator to stop the run (CancelJob with stop), so that the call in
// flight returns what the agents measured before they stopped instead of
// an error. The flag is a signal handler's: it is polled every 50 ms.
#ifndef RESHARD_CLIENT_JOB_INTERRUPT_H_
#define RESHARD_CLIENT_JOB_INTERRUPT_H_

#include <memory>
#include <string>

#include "common/periodic_task.h"
#include "reshard/client.h"

namespace reshard::client {

class JobRunInterrupter {
 public:
  // Installs the SIGINT handler and starts watching for `job`.
  JobRunInterrupter(std::unique_ptr<Client> client, std::string job);
  // Stops watching (after the CancelJob in flight, if any).
  ~JobRunInterrupter() = default;

 private:
  bool Tick();  // false once it asked to stop the run

  std::unique_ptr<Client> client_;
  const std::string job_;
  PeriodicTask task_;  // last: stopped before the members it uses go
};

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_JOB_INTERRUPT_H_
