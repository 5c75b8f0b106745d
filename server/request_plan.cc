#include "server/request_plan.h"

#include <utility>

#include "absl/synchronization/notification.h"
#include "common/echoed_text.h"

namespace reshard::server {

absl::Status UnknownMesh(const std::string& id) {
  return absl::NotFoundError(
      absl::StrCat("mesh_id: unknown mesh ", EchoedValue(id)));
}

absl::StatusOr<PlanRequest> LimitedPlanRequest(
    const Mesh& mesh, const v1::Tensor& tensor, const v1::DistState& src,
    const v1::DistState& dst, const v1::PlanOptions& options,
    const ServiceOptions& limits, uint64_t cache_scope) {
  absl::StatusOr<PlanRequest> request = proto::PlanRequestFromProto(
      mesh, tensor, src, dst, options, limits.default_search_budget);
  if (request.ok()) {
    request->cache_scope = cache_scope;
    request->options.max_search_bytes = limits.max_search_bytes;
  }
  if (request.ok() &&
      request->options.search_budget > limits.max_search_budget) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.search_budget: ", request->options.search_budget,
                     " is above this server's limit of ",
                     limits.max_search_budget, " expanded states"));
  }
  return request;
}

bool IsLightSearch(const Mesh& mesh, PlannerKind planner, int tensor_rank) {
  if (planner == PlannerKind::kTorchGreedy) return true;
  int64_t states = 1;
  for (int d = 0; d < mesh.ndim(); ++d) {
    states *= tensor_rank + 2;
    if (states > kLightSearchStates) return false;
  }
  return true;
}

bool NeedsPlanningPool(const Mesh& mesh, const PlanRequest& request,
                       const PlanCache& cache) {
  return !IsLightSearch(mesh, request.options.planner, request.tensor.rank()) &&
         !cache.Contains(PlanFingerprint(mesh, request));
}

absl::StatusOr<Plan> PlanThroughPool(const Mesh& mesh,
                                     const PlanRequest& request,
                                     PlanCache& cache, PlanningPool* pool,
                                     const StopCheck& stop) {
  if (pool == nullptr || !NeedsPlanningPool(mesh, request, cache)) {
    return MakePlanCached(mesh, request, cache, stop);
  }
  absl::Notification done;
  absl::StatusOr<Plan> plan;
  absl::Status queued = pool->Submit(request.cache_scope, [&] {
    plan = MakePlanCached(mesh, request, cache, stop);
    done.Notify();
  });
  if (!queued.ok()) return queued;
  done.WaitForNotification();
  return plan;
}

StopCheck StopAt(std::chrono::system_clock::time_point deadline,
                 std::function<bool()> cancelled) {
  return [deadline, cancelled = std::move(cancelled)]() -> absl::Status {
    if (std::chrono::system_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          "planning stopped at the call's deadline");
    }
    if (cancelled()) {
      return absl::CancelledError("the client cancelled the call");
    }
    return absl::OkStatus();
  };
}

}  // namespace reshard::server
