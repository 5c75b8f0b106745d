#include "common/error_kind.h"

#include <utility>

#include "absl/strings/cord.h"

namespace reshard {
namespace {

constexpr char kKindPayload[] = "type.reshard.dev/agent.ErrorKind";
constexpr char kDigestMismatch[] = "digest_mismatch";

}  // namespace

absl::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kPeer:
      return "peer";
    case ErrorKind::kDigestMismatch:
      return kDigestMismatch;
    case ErrorKind::kBadPlan:
      return "bad_plan";
    case ErrorKind::kCancelled:
      return "cancelled";
    case ErrorKind::kValidation:
      return "validation";
    case ErrorKind::kOther:
      break;
  }
  return "other";
}

absl::Status MarkDigestMismatch(absl::Status status) {
  status.SetPayload(kKindPayload, absl::Cord(kDigestMismatch));
  return status;
}

ErrorKind ErrorKindOf(const absl::Status& status) {
  if (status.GetPayload(kKindPayload) == absl::Cord(kDigestMismatch)) {
    return ErrorKind::kDigestMismatch;
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
