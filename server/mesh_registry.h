// A MeshRegistry holds the meshes a planner serves, keyed by their content
// hash (MeshId), up to a fixed number in all and per owner (the credential
// that created a mesh: the caller's job token, "" for none), so that one
// client cannot fill it for everyone. Registering is idempotent (a mesh
// keeps its first owner); a full registry refuses new meshes without
// touching stored ones. Thread-safe.
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
  explicit MeshRegistry(size_t max_meshes,
                        size_t max_per_owner = static_cast<size_t>(-1))
      : max_meshes_(max_meshes), max_per_owner_(max_per_owner) {}

  struct Registered {
    std::string id;
    bool created = false;
  };
  // RESOURCE_EXHAUSTED when `mesh` is new and the registry is full, or
  // `owner` already created its maximum.
  absl::StatusOr<Registered> Register(Mesh mesh, const std::string& owner = "");
  // Null when `id` is unknown.
  std::shared_ptr<const Mesh> Get(const std::string& id) const;
  enum class Deleted { kYes, kUnknown, kNotOwner };
  // Deletes mesh `id` when `owner` created it (null: whoever did, an
  // admin's delete).
  Deleted Delete(const std::string& id, const std::string* owner = nullptr);
  // Every mesh, ordered by id.
  std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>> List() const;
  size_t size() const;
  size_t capacity() const { return max_meshes_; }

 private:
  struct Entry {
    std::shared_ptr<const Mesh> mesh;
    std::string owner;
  };

  const size_t max_meshes_;
  const size_t max_per_owner_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> meshes_ ABSL_GUARDED_BY(mu_);
  // How many meshes each owner created (owners with none are dropped).
  std::map<std::string, size_t> owned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_MESH_REGISTRY_H_
