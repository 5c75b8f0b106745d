#include "server/request_plan.h"

#include <utility>

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
  if (request.ok()) request->cache_scope = cache_scope;
  if (request.ok() &&
      request->options.search_budget > limits.max_search_budget) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.search_budget: ", request->options.search_budget,
                     " is above this server's limit of ",
                     limits.max_search_budget, " expanded states"));
  }
  return request;
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
