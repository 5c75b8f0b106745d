// reshard::Client is the C++ client of the Reshard planner service. Every
// call carries a deadline, retries UNAVAILABLE with exponential backoff
// (a target listing several servers is load-balanced round-robin, so a
// retry reaches a survivor), and plans on meshes registered through this
// client transparently re-register when a replica answers NOT_FOUND.
// Results are core types (planner/), converted in one place.
//
// A Client is safe for concurrent use from multiple threads.
#ifndef RESHARD_CLIENT_CLIENT_H_
#define RESHARD_CLIENT_CLIENT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "planner/mesh.h"
#include "planner/plan.h"
#include "planner/planner.h"
#include "reshard/v1/planner.grpc.pb.h"

namespace reshard {

struct ClientOptions {
  // "host:port", or several comma-separated ("127.0.0.1:1,127.0.0.1:2"),
  // balanced round-robin.
  std::string target = "127.0.0.1:50051";
  absl::Duration timeout = absl::Seconds(10);  // per attempt
  int max_attempts = 5;
  absl::Duration initial_backoff = absl::Milliseconds(20);
  absl::Duration max_backoff = absl::Milliseconds(500);
};

// One resolved communicator group of a rank (ResolveGroups).
struct ResolvedGroup {
  std::string name;
  Group mesh_dims;
  std::vector<int64_t> ranks;
  int64_t index = 0;
};

class Client {
 public:
  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);

  // The mesh's content-addressed id (the same on every replica).
  absl::StatusOr<std::string> RegisterMesh(const Mesh& mesh);
  absl::StatusOr<Mesh> GetMesh(const std::string& mesh_id);
  absl::StatusOr<std::vector<std::pair<std::string, Mesh>>> ListMeshes();
  absl::Status DeleteMesh(const std::string& mesh_id);

  // Plans on a mesh registered through this client (re-registered when a
  // replica does not know it).
  absl::StatusOr<Plan> PlanRegistered(const std::string& mesh_id,
                                      const PlanRequest& request);
  // Plans on an inline mesh: any replica can answer.
  absl::StatusOr<Plan> PlanInline(const Mesh& mesh, const PlanRequest& request);
  // Plans every request (one options set) on an inline mesh, in order.
  absl::StatusOr<std::vector<Plan>> PlanBatch(
      const Mesh& mesh, const std::vector<PlanRequest>& requests);

  absl::StatusOr<std::vector<ResolvedGroup>> ResolveGroups(
      const std::string& mesh_id, int64_t rank);

  // OK when the server reports SERVING.
  absl::Status Health();

 private:
  explicit Client(ClientOptions options,
                  std::shared_ptr<grpc::Channel> channel);

  // Runs `call(context)` with a deadline, retrying UNAVAILABLE.
  template <typename Call>
  absl::Status WithRetries(Call call);
  std::shared_ptr<const Mesh> KnownMesh(const std::string& id);

  const ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Planner::Stub> stub_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Mesh>> meshes_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard

#endif  // RESHARD_CLIENT_CLIENT_H_
