// The time the Coordinator keeps its books by: when a job was last active
// (idle jobs are dropped) and when a run was dispatched and last reported
// (its record's seconds). Tests hand in a clock they move by hand, so idle
// drops are checked without sleeping. Waits stay on the real clock: the
// deadline a caller gives is real time.
#ifndef RESHARD_COORDINATOR_CLOCK_H_
#define RESHARD_COORDINATOR_CLOCK_H_

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace reshard::coordinator {

using Clock = std::function<absl::Time()>;

inline Clock SystemClock() {
  return [] { return absl::Now(); };
}

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_CLOCK_H_
