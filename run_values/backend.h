// The backends a run can use (docs/DESIGN.md §6.1), and their one spelling:
// flags, the wire's enum (proto/job_convert.h), reports and logs all go
// through ParseBackend and BackendName; code switches on the enum.
#ifndef RESHARD_RUN_VALUES_BACKEND_H_
#define RESHARD_RUN_VALUES_BACKEND_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

enum class Backend { kGloo, kNccl };

// "gloo" or "nccl".
absl::string_view BackendName(Backend backend);

// The backend `name` spells; INVALID_ARGUMENT naming `field` and the
// accepted names otherwise.
absl::StatusOr<Backend> ParseBackend(absl::string_view name,
                                     absl::string_view field = "backend");

}  // namespace reshard

#endif  // RESHARD_RUN_VALUES_BACKEND_H_
