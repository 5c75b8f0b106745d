// Tells the Coordinator how far a run is (executions finished), so that
// `job show` can say so while it runs. The run thread only records the
// count; this reporter's own thread sends it about once a second, so a
// slow or absent Coordinator never stalls a run. Failures are ignored: the
// run's report says how it ended.
#ifndef RESHARD_AGENT_PROGRESS_REPORTER_H_
#define RESHARD_AGENT_PROGRESS_REPORTER_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/periodic_task.h"
#include "reshard/v1/coordinator.grpc.pb.h"

namespace reshard::agent {

class ProgressReporter {
 public:
  ProgressReporter(std::shared_ptr<v1::Coordinator::StubInterface> stub,
                   v1::AgentId agent, std::string run_id,
                   absl::Duration period = absl::Seconds(1));
  // Stops (after the call in flight, bounded by its deadline).
  ~ProgressReporter() = default;

  // The run has finished `executions_done` executions. Thread-safe.
  void Update(int executions_done) { done_.store(executions_done); }

 private:
  bool Tick();  // sends the count when it changed

  std::shared_ptr<v1::Coordinator::StubInterface> stub_;
  const v1::AgentId agent_;
  const std::string run_id_;
  std::atomic<int> done_{0};
  int sent_ = 0;       // the task's thread only
  PeriodicTask task_;  // last: stopped before the members it uses go
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_PROGRESS_REPORTER_H_
