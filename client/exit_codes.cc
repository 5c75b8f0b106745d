#include "client/exit_codes.h"

#include "absl/strings/str_cat.h"
#include "planner/batch_format.h"

namespace reshard {

int ExitCode(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return kExitBadInput;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    case absl::StatusCode::kFailedPrecondition:
      return kExitFailedPrecondition;
    default:
      return kExitOther;
  }
}

std::string ErrorJson(const absl::Status& status) {
  return absl::StrCat("{\"error\": ", StatusJson(status), "}");
}

int ReportFailure(const absl::Status& status, bool json, std::ostream& out,
                  std::ostream& err) {
  err << "reshardctl: " << absl::StatusCodeToString(status.code()) << ": "
      << status.message() << "\n";
  if (json) out << ErrorJson(status) << "\n";
  return ExitCode(status);
}

}  // namespace reshard
