#include "client/exit_codes.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"
#include "common/reworded_status.h"
#include "common/run_failure.h"
#include "planner/format/batch_format.h"

namespace reshard::client {

namespace {
constexpr char kInterruptedPayload[] = "reshard.io/interrupted";
}  // namespace

absl::Status MarkInterrupted(absl::Status status) {
  status.SetPayload(kInterruptedPayload, absl::Cord("1"));
  return status;
}

bool IsInterrupted(const absl::Status& status) {
  return status.GetPayload(kInterruptedPayload).has_value();
}

int ExitCode(const absl::Status& status) {
  if (IsInterrupted(status)) return kExitInterrupted;
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
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitRefused;
    default:
      return kExitOther;
  }
}

absl::Status ExplainDeadline(const absl::Status& status,
                             const std::optional<absl::Duration>& deadline,
                             absl::Duration elapsed) {
  if (status.code() != absl::StatusCode::kDeadlineExceeded) return status;
  const bool bare = status.message() == "Deadline Exceeded";
  if (!bare && !(deadline.has_value() && elapsed >= *deadline)) return status;
  std::string message =
      deadline.has_value()
          ? absl::StrCat("the call did not finish within --deadline_seconds ",
                         absl::ToDoubleSeconds(*deadline))
          : "the call did not finish within the default deadline (10 s per "
            "attempt); --deadline_seconds D allows more";
  if (!bare) absl::StrAppend(&message, " (", status.message(), ")");
  return Reworded(status, message);
}

std::string ErrorJson(const absl::Status& status) {
  const std::vector<RankFailure> ranks = RankFailuresOf(status);
  if (ranks.empty())
    return absl::StrCat("{\"error\": ", StatusJson(status), "}");
  std::vector<std::string> items;
  for (const RankFailure& f : ranks) items.push_back(RankFailureJson(f));
  return absl::StrCat("{\"error\": {\"code\": ",
                      JsonString(absl::StatusCodeToString(status.code())),
                      ", \"message\": ", JsonString(status.message()),
                      ", \"ranks\": [", absl::StrJoin(items, ", "), "]}}");
}

int ReportFailure(const absl::Status& status, bool json, std::ostream& out,
                  std::ostream& err) {
  err << "reshardctl: " << absl::StatusCodeToString(status.code()) << ": "
      << status.message() << "\n";
  for (const RankFailure& f : RankFailuresOf(status)) {
    err << "  rank " << f.rank << (f.host.empty() ? "" : " on " + f.host)
        << ": " << f.kind << ": " << f.message << "\n";
  }
  if (json) out << ErrorJson(status) << "\n";
  return ExitCode(status);
}

}  // namespace reshard::client
