#include "agent/kept_schedules.h"

#include <algorithm>

#include "common/schedule_bounds.h"

namespace reshard::agent {

void KeptSchedules::Retain(const std::vector<std::string>& live,
                           int64_t generation) {
  for (auto it = kept_.begin(); it != kept_.end();) {
    const bool listed =
        std::find(live.begin(), live.end(), it->first) != live.end();
    if (listed && it->second.generation == generation) {
      ++it;
    } else {
      it = kept_.erase(it);
    }
  }
}

KeptSchedule& KeptSchedules::Keep(
    const std::string& id, int64_t generation,
    std::shared_ptr<const executor::CrossRunWork> work) {
  kept_.erase(id);
  // Never reached after Retain with the run's list (it holds this id and
  // at most kMaxSchedulesPerJob in all): a bound whatever the sender.
  while (kept_.size() >= kMaxSchedulesPerJob) kept_.erase(kept_.begin());
  KeptSchedule& kept = kept_[id];
  kept.generation = generation;
  kept.work = std::move(work);
  return kept;
}

KeptSchedule* KeptSchedules::Find(const std::string& id) {
  auto it = kept_.find(id);
  return it == kept_.end() ? nullptr : &it->second;
}

int64_t KeptSchedules::HeldBytes(const std::string& except) const {
  int64_t bytes = 0;
  for (const auto& [id, kept] : kept_) {
    if (id == except) continue;
    if (kept.runner != nullptr) bytes += kept.runner->StagingBytes();
    if (kept.bound != nullptr) bytes += kept.bound->staging_bytes();
  }
  return bytes;
}

int64_t KeptSchedules::Release(const std::string& except) {
  const int64_t bytes = HeldBytes(except);
  for (auto& [id, kept] : kept_) {
    if (id == except) continue;
    kept.runner.reset();
    kept.bound.reset();
  }
  return bytes;
}

}  // namespace reshard::agent
