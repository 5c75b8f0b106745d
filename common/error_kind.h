// Why a run failed on a rank, as the `kind` label of the agent's
// reshard_executor_errors_total (docs/DESIGN.md §7) and of each rank a
// failed RunJob names (common/run_failure.h): a closed set an operator
// and a scheduler can act on. Most kinds follow from the status code the
// executor returns (Gloo timeouts are DEADLINE_EXCEEDED, a lost or failing peer
// UNAVAILABLE); a digest mismatch and a tensor binding's refusal share their
// codes with other refusals of a run, so the agent marks them with a payload
// where it detects them, and a report carries the kind on the wire.
#ifndef RESHARD_COMMON_ERROR_KIND_H_
#define RESHARD_COMMON_ERROR_KIND_H_

#include <array>
#include <optional>

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
  kBinding,     // the rank's registered tensors were refused in pre-flight
  kOther,
};
inline constexpr std::array<ErrorKind, 8> kAllErrorKinds = {
    ErrorKind::kTimeout, ErrorKind::kPeer,      ErrorKind::kDigestMismatch,
    ErrorKind::kBadPlan, ErrorKind::kCancelled, ErrorKind::kValidation,
    ErrorKind::kBinding, ErrorKind::kOther};

// The label value: "timeout", "peer", "digest_mismatch", "bad_plan",
// "cancelled", "validation", "binding", "other".
absl::string_view ErrorKindName(ErrorKind kind);
// The kind a label value names; nullopt for none.
std::optional<ErrorKind> ErrorKindNamed(absl::string_view name);

// `status` (not OK) marked as of `kind`, whatever its code.
absl::Status MarkErrorKind(absl::Status status, ErrorKind kind);

// The kind of a run's failure `status` (not OK): its mark, else what its
// code says.
ErrorKind ErrorKindOf(const absl::Status& status);

}  // namespace reshard

#endif  // RESHARD_COMMON_ERROR_KIND_H_
