#include "common/error_kind.h"

#include <string>
#include <utility>

#include "absl/strings/cord.h"

namespace reshard {
namespace {

constexpr char kKindPayload[] = "type.reshard.dev/agent.ErrorKind";

}  // namespace

absl::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kPeer:
      return "peer";
    case ErrorKind::kDigestMismatch:
      return "digest_mismatch";
    case ErrorKind::kBadPlan:
      return "bad_plan";
    case ErrorKind::kCancelled:
      return "cancelled";
    case ErrorKind::kValidation:
      return "validation";
    case ErrorKind::kBinding:
      return "binding";
    case ErrorKind::kOther:
      break;
  }
  return "other";
}

std::optional<ErrorKind> ErrorKindNamed(absl::string_view name) {
  for (ErrorKind kind : kAllErrorKinds) {
    if (ErrorKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

absl::Status MarkErrorKind(absl::Status status, ErrorKind kind) {
  status.SetPayload(kKindPayload, absl::Cord(ErrorKindName(kind)));
  return status;
}

ErrorKind ErrorKindOf(const absl::Status& status) {
  if (auto mark = status.GetPayload(kKindPayload); mark.has_value()) {
    if (std::optional<ErrorKind> kind = ErrorKindNamed(std::string(*mark))) {
      return *kind;
    }
  }
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
      return ErrorKind::kTimeout;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted:
      return ErrorKind::kPeer;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return ErrorKind::kBadPlan;
    case absl::StatusCode::kCancelled:
      return ErrorKind::kCancelled;
    default:
      return ErrorKind::kOther;
  }
}

}  // namespace reshard
