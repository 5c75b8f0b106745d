#include "server/batch_request.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/batch_convert.h"

namespace reshard::server {

absl::StatusOr<BatchPlan> ServeBatch(const Mesh& mesh,
                                     const v1::PlanBatchRequest& request,
                                     const ServiceOptions& limits,
                                     PlanCache& cache, const StopCheck& stop,
                                     uint64_t cache_scope) {
  if (request.items_size() > limits.max_batch_items) {
    return absl::InvalidArgumentError(
        absl::StrCat("items: ", request.items_size(), " items, at most ",
                     limits.max_batch_items, " per batch"));
  }
  std::vector<absl::StatusOr<PlanRequest>> items;
  items.reserve(request.items_size());
  for (const v1::PlanBatchRequest::Item& item : request.items()) {
    items.push_back(LimitedPlanRequest(mesh, item.tensor(), item.src(),
                                       item.dst(), request.options(), limits,
                                       cache_scope));
  }
  return PlanBatch(mesh, items, proto::BatchOptionsFromProto(request), cache,
                   stop);
}

}  // namespace reshard::server
