#include "coordinator/membership.h"

namespace reshard::coordinator {

absl::string_view BackendName(Backend backend) {
  return backend == Backend::kNccl ? "nccl" : "gloo";
}

}  // namespace reshard::coordinator
