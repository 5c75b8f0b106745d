// reshardctl's exit statuses, which scripts branch on, and how a failed
// command reports itself. The statuses (documented in README.md):
//   0  success
//   2  bad input: INVALID_ARGUMENT, OUT_OF_RANGE, usage errors
//   3  NOT_FOUND (an unknown mesh, job or file)
//   4  UNAVAILABLE or DEADLINE_EXCEEDED (no server, or out of time)
//   5  FAILED_PRECONDITION (valid input the request cannot satisfy)
//   6  UNAUTHENTICATED or PERMISSION_DENIED (a missing or wrong token)
//   130  interrupted (Ctrl-C: the shell's 128 + SIGINT)
//   1  anything else (a run that did not validate, an internal error, ...)
#ifndef RESHARD_CLIENT_EXIT_CODES_H_
#define RESHARD_CLIENT_EXIT_CODES_H_

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace reshard::client {

inline constexpr int kExitOk = 0;
inline constexpr int kExitOther = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitUnavailable = 4;
inline constexpr int kExitFailedPrecondition = 5;
inline constexpr int kExitRefused = 6;
inline constexpr int kExitInterrupted = 130;

// `status` (CANCELLED, naming what was done) marked as the user's Ctrl-C,
// which ExitCode maps to kExitInterrupted; a run cancelled otherwise (a
// `job cancel`, a deadline) keeps exit 1.
absl::Status MarkInterrupted(absl::Status status);
bool IsInterrupted(const absl::Status& status);

// The exit status for a command that ended with `status`.
int ExitCode(const absl::Status& status);

// A DEADLINE_EXCEEDED caused by the call's deadline says which deadline
// passed and how to ask for more time: gRPC's bare "Deadline Exceeded", or
// a server's answer that came once `deadline` (--deadline_seconds; unset:
// the library's defaults) had passed since the command began, `elapsed`
// ago. A server stops at the same deadline, and its "planning stopped at
// the call's deadline" can arrive before gRPC's own; it is kept in
// parentheses. Other DEADLINE_EXCEEDEDs (a collective's timeout within the
// deadline) and other codes are returned as they are.
absl::Status ExplainDeadline(const absl::Status& status,
                             const std::optional<absl::Duration>& deadline,
                             absl::Duration elapsed);

// {"error": {"code": "NOT_FOUND", "message": "..."}}: the code as
// absl::StatusCodeToString prints it.
std::string ErrorJson(const absl::Status& status);

// Reports a failed command: "reshardctl: CODE: message" on `err` and, when
// `json`, ErrorJson on `out`. Returns ExitCode(status).
int ReportFailure(const absl::Status& status, bool json, std::ostream& out,
                  std::ostream& err);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_EXIT_CODES_H_
