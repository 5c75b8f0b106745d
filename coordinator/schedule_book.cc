#include "coordinator/schedule_book.h"

#include <atomic>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/schedule_bounds.h"

namespace reshard::coordinator {
namespace {

std::string NewScheduleId() {
  static const uint32_t prefix = std::random_device()();
  static std::atomic<uint64_t> counter{0};
  return absl::StrFormat("s%08x-%d", prefix, ++counter);
}

absl::Status PrepareAgain(const std::string& id, const std::string& job,
                          const std::string& why) {
  return absl::FailedPreconditionError(
      absl::StrCat("schedule_id: job \"", job, "\" holds no schedule \"", id,
                   "\" (", why, "): prepare again (PrepareCrossMesh)"));
}

// An id as the Coordinator makes them: short printable ASCII. Checked
// before it is echoed in any message.
absl::Status CheckId(const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("schedule_id: required");
  if (id.size() > kMaxScheduleIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("schedule_id: ", id.size(),
                                                   " bytes; ids have at most ",
                                                   kMaxScheduleIdBytes));
  }
  for (unsigned char c : id) {
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(
          "schedule_id: not printable ASCII (ids are PrepareCrossMesh's)");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ScheduleBook::Add(
    std::shared_ptr<const RunSpec> spec, int64_t generation,
    const std::string& job) {
  LiveIds(generation);  // a generation's end frees its schedules' places
  if (schedules_.size() >= kMaxSchedulesPerJob) {
    return absl::ResourceExhaustedError(
        absl::StrCat("job \"", job, "\" holds ", kMaxSchedulesPerJob,
                     " schedules, the most a job keeps: delete one "
                     "(DeleteSchedule) before preparing another"));
  }
  std::string id = NewScheduleId();
  schedules_[id] = Schedule{std::move(spec), generation, false};
  return id;
}

absl::StatusOr<Schedule*> ScheduleBook::Find(const std::string& id,
                                             int64_t generation,
                                             const std::string& job) {
  if (absl::Status s = CheckId(id); !s.ok()) return s;
  auto it = schedules_.find(id);
  if (it == schedules_.end()) {
    return PrepareAgain(id, job, "never prepared, or deleted");
  }
  if (it->second.generation != generation) {
    const int64_t prepared = it->second.generation;
    schedules_.erase(it);
    return PrepareAgain(
        id, job,
        absl::StrCat("it was prepared in generation ", prepared,
                     "; an agent joined or left since, generation ",
                     generation));
  }
  return &it->second;
}

absl::Status ScheduleBook::Delete(const std::string& id,
                                  const std::string& job) {
  if (absl::Status s = CheckId(id); !s.ok()) return s;
  if (schedules_.erase(id) == 1) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("schedule_id: job \"", job,
                                          "\" holds no schedule \"", id, "\""));
}

std::vector<std::string> ScheduleBook::LiveIds(int64_t generation) {
  std::vector<std::string> ids;
  for (auto it = schedules_.begin(); it != schedules_.end();) {
    if (it->second.generation != generation) {
      it = schedules_.erase(it);
    } else {
      ids.push_back(it->first);
      ++it;
    }
  }
  return ids;
}

std::vector<std::pair<std::string, const Schedule*>> ScheduleBook::Of(
    int64_t generation) const {
  std::vector<std::pair<std::string, const Schedule*>> out;
  for (const auto& [id, schedule] : schedules_) {
    if (schedule.generation == generation) out.emplace_back(id, &schedule);
  }
  return out;
}

}  // namespace reshard::coordinator
