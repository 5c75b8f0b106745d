#include "executor/batch_work.h"

#include "planner/batch_digest.h"

namespace reshard::executor {

std::vector<const Plan*> BatchWork::PlanPointers() const {
  std::vector<const Plan*> pointers;
  pointers.reserve(plans.size());
  for (const Plan& plan : plans) pointers.push_back(&plan);
  return pointers;
}

uint64_t BatchWork::Digest(const Mesh& mesh) const {
  return BatchDigest(mesh, PlanPointers(), rows);
}

}  // namespace reshard::executor
