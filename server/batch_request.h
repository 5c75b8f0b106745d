// PlanBatch as the service serves it (docs/DESIGN.md §8): the batch's item
// limit, every item parsed within this server's planning limits (a bad item is
// its own error), and the core batch planner (planner/batch/batch_plan.h) on
// the shared plan cache. Apart from planner_service.cc so that the service
// stays a thin adapter.
#ifndef RESHARD_SERVER_BATCH_REQUEST_H_
#define RESHARD_SERVER_BATCH_REQUEST_H_

#include "absl/status/statusor.h"
#include "planner/batch/batch_plan.h"
#include "planner/core/mesh.h"
#include "planner/search/plan_cache.h"
#include "planner/search/search_support.h"
#include "reshard/v1/planner.pb.h"
#include "server/request_plan.h"

namespace reshard::server {

// Plans `request`'s items on `mesh`. INVALID_ARGUMENT naming `items` past
// `limits.max_batch_items`; otherwise PlanBatch's errors.
absl::StatusOr<BatchPlan> ServeBatch(const Mesh& mesh,
                                     const v1::PlanBatchRequest& request,
                                     const ServiceOptions& limits,
                                     PlanCache& cache, const StopCheck& stop,
                                     uint64_t cache_scope);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_BATCH_REQUEST_H_
