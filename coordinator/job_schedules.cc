// Job's prepared schedules (docs/DESIGN.md §9, "A static schedule").
#include "coordinator/job.h"

namespace reshard::coordinator {

absl::StatusOr<PreparedSchedule> Job::Prepare(
    std::shared_ptr<const RunSpec> spec) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::string> id =
      schedules_.Add(std::move(spec), generation_, name_);
  if (!id.ok()) return id.status();
  return PreparedSchedule{*std::move(id), generation_, schedules_.size()};
}

absl::StatusOr<std::shared_ptr<const RunSpec>> Job::Scheduled(
    const std::string& id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Schedule*> schedule = schedules_.Find(id, generation_, name_);
  if (!schedule.ok()) return schedule.status();
  return (*schedule)->spec;
}

absl::Status Job::DeleteSchedule(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return schedules_.Delete(id, name_);
}

void Job::NoteScheduleRunLocked(const RunSpec& spec, bool ok) {
  absl::StatusOr<Schedule*> schedule =
      schedules_.Find(spec.schedule_id, generation_, name_);
  if (schedule.ok()) (*schedule)->delivered = ok;
}

}  // namespace reshard::coordinator
