// A finished run as GetJob and `reshardctl job show` list it: each job keeps
// its last kRecentRuns, so an operator sees why recent runs failed without
// the job's memory growing with its age.
#ifndef RESHARD_COORDINATOR_RUN_RECORD_H_
#define RESHARD_COORDINATOR_RUN_RECORD_H_

#include <cstddef>
#include <string>

namespace reshard::coordinator {

inline constexpr size_t kRecentRuns = 16;
// A failure's message is cut to this many bytes in the record.
inline constexpr size_t kRunRecordErrorBytes = 512;

struct RunRecord {
  std::string run_id;
  // "validated", "not_validated", or the failure's status code name
  // (absl::StatusCodeToString: "UNAVAILABLE", "CANCELLED", ...).
  std::string result;
  std::string error;   // why it failed or did not validate; "" otherwise
  double seconds = 0;  // dispatch to its end
};

}  // namespace reshard::coordinator

#endif  // RESHARD_COORDINATOR_RUN_RECORD_H_
