// How many prepared schedules (docs/DESIGN.md §9, "A static schedule") a
// job keeps: the Coordinator refuses one more, and an agent never keeps
// more, so each side's memory for them is bounded by the same count.
#ifndef RESHARD_COMMON_SCHEDULE_BOUNDS_H_
#define RESHARD_COMMON_SCHEDULE_BOUNDS_H_

#include <cstddef>

namespace reshard {

inline constexpr size_t kMaxSchedulesPerJob = 16;
// A schedule id's bytes at most (ids are the Coordinator's own, shorter).
inline constexpr size_t kMaxScheduleIdBytes = 64;

}  // namespace reshard

#endif  // RESHARD_COMMON_SCHEDULE_BOUNDS_H_
