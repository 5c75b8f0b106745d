// The paged listings (docs/DESIGN.md §5, Bounds): ListJobs, GetJob's agents
// and ListMeshes. A page holds at most the request's page_size entries
// (0: no count limit) and never more bytes than --max_message_bytes leaves
// after kPageSlackBytes; its next_page_token names where the next page
// starts (a job name, a rank, a mesh id), empty on the last page.
#ifndef RESHARD_SERVER_PAGES_H_
#define RESHARD_SERVER_PAGES_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "coordinator/coordinator.h"
#include "reshard/v1/coordinator.pb.h"
#include "reshard/v1/planner.pb.h"
#include "server/mesh_registry.h"

namespace reshard::server {

// The jobs `caller` sees, from the request's page token on.
absl::Status FillJobsPage(const coordinator::Coordinator& core,
                          const coordinator::Caller& caller,
                          const v1::ListJobsRequest& request,
                          int64_t max_message_bytes,
                          v1::ListJobsResponse* response);

// Job request.job with the agents of the page.
absl::Status FillJobPage(const coordinator::Coordinator& core,
                         const coordinator::Caller& caller,
                         const v1::GetJobRequest& request,
                         int64_t max_message_bytes,
                         v1::GetJobResponse* response);

// The meshes `viewer` registered (null: all, for an admin).
absl::Status FillMeshesPage(const MeshRegistry& registry,
                            const std::string* viewer,
                            const v1::ListMeshesRequest& request,
                            int64_t max_message_bytes,
                            v1::ListMeshesResponse* response);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_PAGES_H_
