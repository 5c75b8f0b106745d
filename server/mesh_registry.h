// A MeshRegistry holds the meshes a planner serves, keyed by their content
// hash (MeshId), up to a fixed number. Registering is idempotent; a full
// registry refuses new meshes without touching stored ones. Thread-safe.
#ifndef RESHARD_SERVER_MESH_REGISTRY_H_
#define RESHARD_SERVER_MESH_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "planner/mesh.h"

namespace reshard::server {

class MeshRegistry {
 public:
  explicit MeshRegistry(size_t max_meshes) : max_meshes_(max_meshes) {}

  struct Registered {
    std::string id;
    bool created = false;
  };
  // RESOURCE_EXHAUSTED when the registry is full and `mesh` is new.
  absl::StatusOr<Registered> Register(Mesh mesh);
  // Null when `id` is unknown.
  std::shared_ptr<const Mesh> Get(const std::string& id) const;
  // False when `id` is unknown.
  bool Delete(const std::string& id);
  // Every mesh, ordered by id.
  std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>> List() const;
  size_t size() const;
  size_t capacity() const { return max_meshes_; }

 private:
  const size_t max_meshes_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<const Mesh>> meshes_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_MESH_REGISTRY_H_
