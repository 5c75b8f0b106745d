// A job's prepared schedules (docs/DESIGN.md §9, "A static schedule"): the
// cross-mesh runs PrepareCrossMesh planned once, by id, each good for the
// job's generation it was prepared in. A run names one instead of planning;
// the plan is sent to the agents until one run of it succeeded on every
// rank (then each agent keeps it). At most kMaxSchedulesPerJob; not
// thread-safe (the job's lock guards it).
#ifndef RESHARD_COORDINATOR_SCHEDULE_BOOK_H_
#define RESHARD_COORDINATOR_SCHEDULE_BOOK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/work.h"

namespace reshard::coordinator {

struct Schedule {
  std::shared_ptr<const RunSpec> spec;  // the cross-mesh run as planned
  int64_t generation = 0;
  // One run of it succeeded on every rank: every agent keeps its plan.
  bool delivered = false;
};

class ScheduleBook {
 public:
  // Keeps `spec` for `generation` under a fresh id (unique across
  // Coordinator restarts). RESOURCE_EXHAUSTED naming the bound and `job`
  // when it holds kMaxSchedulesPerJob already.
  absl::StatusOr<std::string> Add(std::shared_ptr<const RunSpec> spec,
                                  int64_t generation, const std::string& job);
  // Schedule `id` of `generation`. FAILED_PRECONDITION saying "prepare
  // again" for an id it does not hold (never prepared, deleted) or one of
  // another generation (then forgotten); INVALID_ARGUMENT for an id that
  // is empty, longer than kMaxScheduleIdBytes or not printable ASCII.
  absl::StatusOr<Schedule*> Find(const std::string& id, int64_t generation,
                                 const std::string& job);
  // NOT_FOUND naming schedule_id when it holds no `id`; Find's
  // INVALID_ARGUMENT.
  absl::Status Delete(const std::string& id, const std::string& job);
  // The ids it holds for `generation` (the others are forgotten).
  std::vector<std::string> LiveIds(int64_t generation);
  // The schedules of `generation` by id, leaving the others to LiveIds.
  std::vector<std::pair<std::string, const Schedule*>> Of(
      int64_t generation) const;
  size_t size() const { return schedules_.size(); }

 private:
  std::map<std::string, Schedule> schedules_;
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_SCHEDULE_BOOK_H_
