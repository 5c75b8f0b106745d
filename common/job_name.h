// What a job name may be (docs/DESIGN.md §5, Jobs): names become store
// prefixes, log fields and the subject of issued job tokens
// (common/issued_job_token.h), so they stay plain.
#ifndef RESHARD_COMMON_JOB_NAME_H_
#define RESHARD_COMMON_JOB_NAME_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace reshard {

inline constexpr int64_t kMaxJobNameBytes = 128;

// OK for 1 to `max_bytes` letters, digits, '-', '_' and '.'; otherwise
// INVALID_ARGUMENT starting with `field`, the name escaped.
absl::Status CheckJobName(const std::string& name, int64_t max_bytes,
                          const char* field);

}  // namespace reshard

#endif  // RESHARD_COMMON_JOB_NAME_H_
