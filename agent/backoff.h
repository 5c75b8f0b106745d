// The waits between an agent's attempts to rejoin its job after the
// dispatch stream dropped: 100 ms doubling to 2 s, each drawn within ±20%
// so that the agents of a restarted Coordinator do not all knock at once.
// A value type; not thread-safe.
#ifndef RESHARD_AGENT_BACKOFF_H_
#define RESHARD_AGENT_BACKOFF_H_

#include <algorithm>
#include <cstdint>
#include <random>

#include "absl/time/time.h"

namespace reshard::agent {

class Backoff {
 public:
  static constexpr absl::Duration kInitial = absl::Milliseconds(100);
  static constexpr absl::Duration kMax = absl::Seconds(2);

  explicit Backoff(uint64_t seed) : rng_(seed) {}

  // The next wait: the current step with jitter; the step then doubles.
  absl::Duration Next() {
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    const absl::Duration wait = step_ * jitter(rng_);
    step_ = std::min(step_ * 2, kMax);
    return wait;
  }

 private:
  std::mt19937_64 rng_;
  absl::Duration step_ = kInitial;
};

}  // namespace reshard::agent

#endif  // RESHARD_AGENT_BACKOFF_H_
