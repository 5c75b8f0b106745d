// A service that dies of a fatal signal (a crash, or the abort after an
// exception nothing caught) writes the signal and a symbolized stack to
// stderr first, so its log says where it died instead of ending silently.
// The handler then calls the one installed before it (a sanitizer's, in
// those builds) and the process still ends by the same signal. SIGTERM is
// among the signals it covers; the programs block SIGTERM and take it with
// sigwait(), which a handler never sees.
#ifndef RESHARD_COMMON_CRASH_REPORT_H_
#define RESHARD_COMMON_CRASH_REPORT_H_

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"

namespace reshard {

inline void InstallCrashReport(const char* argv0) {
  absl::InitializeSymbolizer(argv0);
  absl::FailureSignalHandlerOptions options;
  options.call_previous_handler = true;
  absl::InstallFailureSignalHandler(options);
}

}  // namespace reshard

#endif  // RESHARD_COMMON_CRASH_REPORT_H_
