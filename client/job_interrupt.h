// Ctrl-C during `reshardctl job run`: while the RunJob call waits, a thread
// watches client/interrupt.h's flag and, once it is set, asks the job's
// Coordinator to stop the run (CancelJob with stop), so that the call in
// flight returns what the agents measured before they stopped instead of
// an error. The flag is a signal handler's: it is polled every 50 ms.
#ifndef RESHARD_CLIENT_JOB_INTERRUPT_H_
#define RESHARD_CLIENT_JOB_INTERRUPT_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "reshard/client.h"

namespace reshard::client {

class JobRunInterrupter {
 public:
  // Installs the SIGINT handler and starts watching for `job`.
  JobRunInterrupter(std::unique_ptr<Client> client, std::string job);
  // Stops watching and joins (after the CancelJob in flight, if any).
  ~JobRunInterrupter();

 private:
  void Loop();

  std::unique_ptr<Client> client_;
  const std::string job_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_JOB_INTERRUPT_H_
