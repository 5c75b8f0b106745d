// A status with another message and everything else it carries (its code
// and payloads, such as the ranks of common/run_failure.h) kept.
#ifndef RESHARD_COMMON_REWORDED_STATUS_H_
#define RESHARD_COMMON_REWORDED_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace reshard {

inline absl::Status Reworded(const absl::Status& status,
                             absl::string_view message) {
  absl::Status out(status.code(), message);
  status.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) {
        out.SetPayload(url, payload);
      });
  return out;
}

}  // namespace reshard

#endif  // RESHARD_COMMON_REWORDED_STATUS_H_
