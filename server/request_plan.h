// What the Planner's Plan call and the Coordinator's RunJob share when they
// plan for a client: the mesh a request names or carries, the request's
// core form within this server's limits, and the check that stops a search
// at the call's deadline or when the caller goes away.
#ifndef RESHARD_SERVER_REQUEST_PLAN_H_
#define RESHARD_SERVER_REQUEST_PLAN_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/echoed_text.h"
#include "coordinator/token_rules.h"
#include "planner/search/plan_cache.h"
#include "planner/search/planner.h"
#include "planner/search/search_support.h"
#include "proto/convert.h"
#include "reshard/v1/planner.pb.h"
#include "server/mesh_registry.h"
#include "server/planning_pool.h"

namespace reshard::server {

struct ServiceOptions {
  int64_t default_search_budget = kDefaultSearchBudget;
  int64_t max_search_budget = kMaxSearchBudget;  // more: INVALID_ARGUMENT
  int max_batch_items = 4096;
  // No reply is larger (--max_message_bytes; server/message_bounds.h).
  int64_t max_message_bytes = 16 << 20;
  // DeleteMesh needs this token (server/admin_token.h); empty: open.
  std::string admin_token;
  // Which job tokens are accepted and the share each counts in, the
  // meshes' owners (null: none is accepted).
  std::shared_ptr<const coordinator::TokenRules> token_rules;
  // The optimal search's memory (--max_search_bytes).
  int64_t max_search_bytes = kDefaultMaxSearchBytes;
};

absl::Status UnknownMesh(const std::string& id);

// The mesh a request names by id (NOT_FOUND when unknown) or carries
// inline (INVALID_ARGUMENT naming the field when bad).
template <typename Request>
absl::StatusOr<std::shared_ptr<const Mesh>> RequestMesh(
    const MeshRegistry& registry, const Request& request) {
  switch (request.mesh_ref_case()) {
    case Request::kMeshId: {
      std::shared_ptr<const Mesh> mesh = registry.Get(request.mesh_id());
      if (mesh == nullptr) {
        return absl::NotFoundError(absl::StrCat(
            "mesh_id: unknown mesh ", EchoedValue(request.mesh_id()),
            "; register it or send the mesh inline"));
      }
      return mesh;
    }
    case Request::kMesh: {
      absl::StatusOr<Mesh> mesh = proto::MeshFromProto(request.mesh());
      if (!mesh.ok()) return mesh.status();
      return std::make_shared<const Mesh>(*std::move(mesh));
    }
    default:
      break;
  }
  return absl::InvalidArgumentError("mesh_ref: set mesh_id or mesh");
}

// The request's core form, within this server's limits: clients may raise
// the search budget, but not past what the operator allows (a search's
// time and memory grow with it).
// Its cache entries are the `cache_scope`'s (server/caller_credentials.h:
// one per credential), so no caller learns what another planned.
absl::StatusOr<PlanRequest> LimitedPlanRequest(
    const Mesh& mesh, const v1::Tensor& tensor, const v1::DistState& src,
    const v1::DistState& dst, const v1::PlanOptions& options,
    const ServiceOptions& limits, uint64_t cache_scope);

// Whether planning `request` needs the planning pool (server/
// planning_pool.h): not for a cached plan, nor for a search small by
// construction (torch_greedy, or at most kLightSearchStates placements:
// (tensor rank + 2) to the power of the mesh's dims, the R, P and S(k)
// choices of each dim, shard orders aside).
inline constexpr int64_t kLightSearchStates = 4096;
bool IsLightSearch(const Mesh& mesh, PlannerKind planner, int tensor_rank);
bool NeedsPlanningPool(const Mesh& mesh, const PlanRequest& request,
                       const PlanCache& cache);

// MakePlanCached, on `pool` (under the request's cache scope as its
// credential) when the request needs it, waiting for its worker; the
// pool's refusal when its queue is full. Null `pool`: here.
absl::StatusOr<Plan> PlanThroughPool(const Mesh& mesh,
                                     const PlanRequest& request,
                                     PlanCache& cache, PlanningPool* pool,
                                     const StopCheck& stop);

// Stops a search at `deadline` (DEADLINE_EXCEEDED) or once `cancelled`
// says the caller went away (CANCELLED).
StopCheck StopAt(std::chrono::system_clock::time_point deadline,
                 std::function<bool()> cancelled);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_REQUEST_PLAN_H_
