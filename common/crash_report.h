// A service that dies of a fatal signal (a crash, or the abort after an
// exception nothing caught) writes the signal and a symbolized stack to
// stderr first, so its log says where it died instead of ending silently.
// The handler then calls the one installed before it (a sanitizer's, in
// those builds) and the process still ends by the same signal. SIGTERM is
// among the signals it covers; the programs block SIGTERM and take it with
// sigwait(), which a handler never sees.
#ifndef RESHARD_COMMON_CRASH_REPORT_H_
#define RESHARD_COMMON_CRASH_REPORT_H_

namespace reshard {

// Installs the handler; `argv0` locates the binary's symbols. Call first in
// main, before any thread starts.
void InstallCrashReport(const char* argv0);

}  // namespace reshard

#endif  // RESHARD_COMMON_CRASH_REPORT_H_
