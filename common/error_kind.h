// Why a run failed on a rank, as the `kind` label of the agent's
// reshard_executor_errors_total (docs/DESIGN.md §7) and of each rank a
// failed RunJob names (common/run_failure.h): a closed set an operator
// and a scheduler can act on. Most kinds follow from the status code the
// executor returns (Gloo timeouts are DEADLINE_EXCEEDED, a lost or failing peer
// UNAVAILABLE); a digest mismatch is a FAILED_PRECONDITION like other refusals
// of a run, so the agent marks it with a payload where it detects it.
#ifndef RESHARD_COMMON_ERROR_KIND_H_
#define RESHARD_COMMON_ERROR_KIND_H_

#include <array>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace reshard {

enum class ErrorKind {
  kTimeout,         // a collective or the rendezvous ran past its timeout
  kPeer,            // a peer failed, vanished or could not be reached
  kDigestMismatch,  // the plan is not the one the Coordinator digested
  kBadPlan,         // the run's mesh, plan or options were refused
  kCancelled,
  kValidation,  // the run completed but its result is wrong
  kOther,
};
inline constexpr std::array<ErrorKind, 7> kAllErrorKinds = {
    ErrorKind::kTimeout, ErrorKind::kPeer,      ErrorKind::kDigestMismatch,
    ErrorKind::kBadPlan, ErrorKind::kCancelled, ErrorKind::kValidation,
    ErrorKind::kOther};

// The label value: "timeout", "peer", "digest_mismatch", "bad_plan",
// "cancelled", "validation", "other".
absl::string_view ErrorKindName(ErrorKind kind);

// `status` (not OK) marked as a digest mismatch.
absl::Status MarkDigestMismatch(absl::Status status);

// The kind of a run's failure `status` (not OK).
ErrorKind ErrorKindOf(const absl::Status& status);

}  // namespace reshard

#endif  // RESHARD_COMMON_ERROR_KIND_H_
