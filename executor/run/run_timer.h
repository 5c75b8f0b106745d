// The times of one run's parts (BatchRunStats), from the space's marks:
// host timestamps on host memory, CUDA events enqueued with the work on a
// GPU, where copies are asynchronous and the host clock would time their
// enqueueing, not their work. Every time is read once the run's one wait is
// over (Resolve), so timing adds no host synchronization.
#ifndef RESHARD_EXECUTOR_RUN_RUN_TIMER_H_
#define RESHARD_EXECUTOR_RUN_RUN_TIMER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/memory/memory_space.h"

namespace reshard::executor {

class RunTimer {
 public:
  explicit RunTimer(MemorySpace& space) : space_(&space) {}

  // Forgets the last run's points and spans.
  void Start();
  // A point in the run (after everything enqueued so far). A space that
  // cannot mark makes Resolve fail with its error.
  int64_t Now();
  // Adds the seconds from `from` to `to` to `*into` at Resolve; `into`
  // must stay valid until then.
  void Add(int64_t from, int64_t to, double* into);
  // Every span added, once the run's work is done (after the space's
  // Synchronize).
  absl::Status Resolve();

 private:
  struct Span {
    int64_t from, to;
    double* into;
  };
  MemorySpace* space_;
  std::vector<Span> spans_;
  absl::Status error_;  // the first mark that failed
};

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_RUN_TIMER_H_
