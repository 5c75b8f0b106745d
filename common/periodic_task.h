// A callback run periodically on a thread of its own, for the helpers that
// watch something while a caller blocks in a long call (`job run` saying
// which ranks it waits for and stopping its run on Ctrl-C, an agent telling
// the Coordinator how far its run is). Destruction stops it and joins,
// after the tick in flight.
#ifndef RESHARD_COMMON_PERIODIC_TASK_H_
#define RESHARD_COMMON_PERIODIC_TASK_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace reshard {

class PeriodicTask {
 public:
  // Runs `tick` (at once when `at_once`) and then every `period`, until it
  // returns false or the task is destroyed. `tick` runs without any lock.
  PeriodicTask(absl::Duration period, bool at_once, std::function<bool()> tick);
  ~PeriodicTask();

  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

 private:
  void Loop(bool at_once);

  const absl::Duration period_;
  const std::function<bool()> tick_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace reshard

#endif  // RESHARD_COMMON_PERIODIC_TASK_H_
