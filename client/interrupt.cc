#include "client/interrupt.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "client/exit_codes.h"

namespace reshard::client {
namespace {

// When the first SIGINT arrived (CLOCK_MONOTONIC ns), 0 before it.
std::atomic<int64_t> first_interrupt{0};

// A SIGINT within this long of the first is the same Ctrl-C delivered
// twice (`timeout` forwards it to its child and to its process group).
constexpr int64_t kRepeatNanos = 1000000000;

void OnInterrupt(int) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t ns = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
  int64_t first = 0;
  if (first_interrupt.compare_exchange_strong(first, ns)) return;
  if (ns - first >= kRepeatNanos) _exit(kExitInterrupted);
}

}  // namespace

void InstallInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
}

bool Interrupted() { return first_interrupt.load() != 0; }

}  // namespace reshard::client
