// The planner's heavy searches run here, never on gRPC's threads
// (docs/DESIGN.md §5, Planning): a fixed set of workers and a bounded
// queue. A credential's searches run one at a time, in the order they
// came, so one caller holds at most one worker while another waits; each
// credential has at most `queue_per_credential` of them waiting besides
// the one it runs, and at most `queue` wait beyond those the workers run. Past
// either bound a search is refused at once (RESOURCE_EXHAUSTED naming the flag)
// instead of waiting without end. Thread-safe; destruction runs what is queued
// first.
#ifndef RESHARD_SERVER_PLANNING_POOL_H_
#define RESHARD_SERVER_PLANNING_POOL_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace reshard::server {

struct PlanningLimits {
  int workers = 2;               // --planning_workers
  int queue = 64;                // --planning_queue: searches waiting
  int queue_per_credential = 8;  // --planning_queue_per_credential
};

class PlanningPool {
 public:
  explicit PlanningPool(PlanningLimits limits);
  // Join()s.
  ~PlanningPool();
  PlanningPool(const PlanningPool&) = delete;
  PlanningPool& operator=(const PlanningPool&) = delete;

  // Why a search was refused, for the refusal counter.
  enum class Refusal { kQueueFull, kCredentialQueueFull };

  // Queues `task` for a worker under `credential` (a caller's cache scope:
  // server/caller_credentials.h). The refusal names the bound; `refused`,
  // when given, says which.
  absl::Status Submit(uint64_t credential, std::function<void()> task,
                      Refusal* refused = nullptr);

  // Runs what is queued, then stops the workers and waits for them: a
  // server joins its pool once its calls are done, before its services
  // go. Idempotent; nothing may be submitted after.
  void Join();

  int64_t queued() const;   // waiting for a worker
  int64_t running() const;  // on a worker now
  const PlanningLimits& limits() const { return limits_; }

 private:
  struct Task {
    uint64_t credential;
    std::function<void()> run;
  };

  void Work();
  // The first queued task whose credential holds no worker, if any.
  bool HasRunnableLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const PlanningLimits limits_;
  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  std::multiset<uint64_t> queued_by_ ABSL_GUARDED_BY(mu_);
  std::set<uint64_t> busy_ ABSL_GUARDED_BY(mu_);  // credentials on a worker
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_PLANNING_POOL_H_
