// The prepared cross-mesh schedules this agent keeps (docs/DESIGN.md §9,
// "A static schedule"), by id: the plan with its digest, and what a run of
// it leaves for the next one: the compiled runner (good while the
// communicators it was compiled on stay open) and the bound tensors with
// their staging buffers (good while the same names stay registered to the
// same memory). A repeated run then plans, compiles and allocates nothing.
// Schedules go when a run's list of the job's schedules no longer holds
// them, or its generation is another; never more than kMaxSchedulesPerJob.
// Run thread only.
#ifndef RESHARD_AGENT_KEPT_SCHEDULES_H_
#define RESHARD_AGENT_KEPT_SCHEDULES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/tensor_binding.h"
#include "executor/run/cross_runner.h"
#include "run_values/cross_work.h"

namespace reshard::agent {

struct KeptSchedule {
  int64_t generation = 0;
  std::shared_ptr<const executor::CrossRunWork> work;  // a plan or a batch
  std::unique_ptr<executor::CrossRunner> runner;
  // CommunicatorCache::opened() when `runner` was compiled: it is good
  // only on the same communicators.
  int64_t runner_comms = -1;
  std::shared_ptr<BoundRun> bound;
};

class KeptSchedules {
 public:
  // Drops every schedule not in `live` or kept for another generation.
  void Retain(const std::vector<std::string>& live, int64_t generation);
  // Keeps `work` under `id` (replacing what was kept), dropping another
  // schedule when that would exceed kMaxSchedulesPerJob.
  KeptSchedule& Keep(const std::string& id, int64_t generation,
                     std::shared_ptr<const executor::CrossRunWork> work);
  // Null when not kept.
  KeptSchedule* Find(const std::string& id);
  // The staging bytes the kept runners and bindings hold, `except`'s not
  // counted.
  int64_t HeldBytes(const std::string& except) const;
  // Frees every kept runner and binding but `except`'s (each schedule is
  // compiled and bound again on its next run); returns the bytes freed.
  // What keeps them with the run under way within --max_run_bytes.
  int64_t Release(const std::string& except);
  size_t size() const { return kept_.size(); }

 private:
  std::map<std::string, KeptSchedule> kept_;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_KEPT_SCHEDULES_H_
