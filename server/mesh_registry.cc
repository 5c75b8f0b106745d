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
  auto existing = meshes_.find(id);
  if (existing != meshes_.end() &&
      existing->second.registrants.count(owner) > 0) {
    return Registered{id, false};
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
  if (existing != meshes_.end()) {
    ++owned;
    existing->second.registrants.insert(owner);
    return Registered{id, false};
  }
  absl::StatusOr<FairShares::Hold> place = RoomFor(owner);
  if (!place.ok()) {
    if (owned == 0) owned_.erase(owner);
    return place.status();
  }
  ++owned;
  meshes_.emplace(id, Entry{std::make_shared<const Mesh>(std::move(mesh)),
                            owner,
                            {owner},
                            *std::move(place)});
  return Registered{id, true};
}

absl::StatusOr<FairShares::Hold> MeshRegistry::RoomFor(
    const std::string& owner) {
  FairShares::Refusal refusal;
  std::optional<FairShares::Hold> place =
      room_.TryHold(owner, 1, room_.max_total(), &refusal);
  if (place.has_value()) return *std::move(place);
  if (refusal.why == FairShares::Refusal::Why::kFairShare) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "mesh: ",
        FairShareRefusalText(refusal, "this credential",
                             {"meshes", room_.max_total(), "--max_meshes",
                              room_.max_total(), "--max_meshes"}),
        "; delete some with DeleteMesh or plan with an inline mesh"));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "mesh: the registry is full (", max_meshes_,
      " meshes, --max_meshes); delete meshes with DeleteMesh or plan with an "
      "inline mesh, and what is deleted goes to the credentials below their "
      "fair share first"));
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
  for (const std::string& registrant : it->second.registrants) {
    auto owned = owned_.find(registrant);
    if (owned != owned_.end() && --owned->second == 0) owned_.erase(owned);
  }
  meshes_.erase(it);
  return Deleted::kYes;
}

std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>>
MeshRegistry::List(const std::string* viewer, const std::string& from,
                   size_t max_meshes) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>> listed;
  for (auto it = meshes_.lower_bound(from);
       it != meshes_.end() && listed.size() < max_meshes; ++it) {
    if (viewer == nullptr || it->second.registrants.count(*viewer) > 0) {
      listed.emplace_back(it->first, it->second.mesh);
    }
  }
  return listed;
}

size_t MeshRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return meshes_.size();
}

}  // namespace reshard::server
