#include "common/crash_report.h"

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"

namespace reshard {

void InstallCrashReport(const char* argv0) {
  absl::InitializeSymbolizer(argv0);
  absl::FailureSignalHandlerOptions options;
  options.call_previous_handler = true;
  absl::InstallFailureSignalHandler(options);
}

}  // namespace reshard
