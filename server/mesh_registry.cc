#include "server/mesh_registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "proto/convert.h"

namespace reshard::server {

absl::StatusOr<MeshRegistry::Registered> MeshRegistry::Register(Mesh mesh) {
  const std::string id = proto::MeshId(mesh);
  absl::MutexLock lock(&mu_);
  if (meshes_.count(id)) return Registered{id, false};
  if (meshes_.size() >= max_meshes_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "mesh: the registry is full (", max_meshes_,
        " meshes); delete meshes with DeleteMesh or plan with an inline mesh"));
  }
  meshes_.emplace(id, std::make_shared<const Mesh>(std::move(mesh)));
  return Registered{id, true};
}

std::shared_ptr<const Mesh> MeshRegistry::Get(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = meshes_.find(id);
  return it == meshes_.end() ? nullptr : it->second;
}

bool MeshRegistry::Delete(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return meshes_.erase(id) > 0;
}

std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>>
MeshRegistry::List() const {
  absl::MutexLock lock(&mu_);
  return {meshes_.begin(), meshes_.end()};
}

size_t MeshRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return meshes_.size();
}

}  // namespace reshard::server
