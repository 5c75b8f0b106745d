#include "server/mesh_registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/same_secret.h"
#include "proto/convert.h"

namespace reshard::server {

absl::StatusOr<MeshRegistry::Registered> MeshRegistry::Register(
    Mesh mesh, const std::string& owner) {
  const std::string id = proto::MeshId(mesh);
  absl::MutexLock lock(&mu_);
  if (meshes_.count(id)) return Registered{id, false};
  if (meshes_.size() >= max_meshes_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "mesh: the registry is full (", max_meshes_,
        " meshes); delete meshes with DeleteMesh or plan with an inline mesh"));
  }
  size_t& owned = owned_[owner];
  if (owned >= max_per_owner_) {
    if (owned == 0) owned_.erase(owner);
    return absl::ResourceExhaustedError(absl::StrCat(
        "mesh: this credential already registered its maximum of ",
        max_per_owner_,
        " meshes (--max_meshes_per_credential); delete some with DeleteMesh "
        "or plan with an inline mesh"));
  }
  ++owned;
  meshes_.emplace(id,
                  Entry{std::make_shared<const Mesh>(std::move(mesh)), owner});
  return Registered{id, true};
}

std::shared_ptr<const Mesh> MeshRegistry::Get(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = meshes_.find(id);
  return it == meshes_.end() ? nullptr : it->second.mesh;
}

MeshRegistry::Deleted MeshRegistry::Delete(const std::string& id,
                                           const std::string* owner) {
  absl::MutexLock lock(&mu_);
  auto it = meshes_.find(id);
  if (it == meshes_.end()) return Deleted::kUnknown;
  if (owner != nullptr && !SameSecret(*owner, it->second.owner)) {
    return Deleted::kNotOwner;
  }
  auto owned = owned_.find(it->second.owner);
  if (owned != owned_.end() && --owned->second == 0) owned_.erase(owned);
  meshes_.erase(it);
  return Deleted::kYes;
}

std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>>
MeshRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>> all;
  for (const auto& [id, entry] : meshes_) all.emplace_back(id, entry.mesh);
  return all;
}

size_t MeshRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return meshes_.size();
}

}  // namespace reshard::server
