#include "coordinator/work.h"

#include "planner/plan_digest.h"

namespace reshard::coordinator {

uint64_t RunSpec::Digest() const {
  return batch.has_value() ? batch->Digest(mesh) : PlanDigest(mesh, plan);
}

}  // namespace reshard::coordinator
