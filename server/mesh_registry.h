// A MeshRegistry holds the meshes a planner serves, keyed by their content
// hash (MeshId), up to a fixed number in all and per credential (the
// caller's job token, "" for none), so that one client cannot fill it for
// everyone. The registry is shared and its listing scoped: a mesh is served
// to whoever names its id (the id is its content's hash), but listed only
// to the credentials that registered it, and to an admin. Registering is
// idempotent (a mesh keeps its first registrant as its owner, who alone
// deletes it; a later registrant counts it against its own share); a full
// registry refuses new meshes without touching stored ones. Thread-safe.
#ifndef RESHARD_SERVER_MESH_REGISTRY_H_
#define RESHARD_SERVER_MESH_REGISTRY_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/fair_shares.h"
#include "planner/core/mesh.h"

namespace reshard::server {

class MeshRegistry {
 public:
  // `clock` times FairShares' waiting window.
  explicit MeshRegistry(
      size_t max_meshes, size_t max_per_owner = static_cast<size_t>(-1),
      FairShares::Clock clock = [] { return absl::Now(); })
      : max_meshes_(max_meshes),
        max_per_owner_(max_per_owner),
        room_(static_cast<int64_t>(max_meshes), std::move(clock)) {}

  struct Registered {
    std::string id;
    bool created = false;
  };
  // RESOURCE_EXHAUSTED when `mesh` is new and the registry is full or
  // `owner` holds its fair share of it while another waits, or `owner` has
  // not registered it yet and already registered its maximum.
  absl::StatusOr<Registered> Register(Mesh mesh, const std::string& owner = "");
  // Null when `id` is unknown.
  std::shared_ptr<const Mesh> Get(const std::string& id) const;
  enum class Deleted { kYes, kUnknown, kNotOwner };
  // Deletes mesh `id` when `owner` created it (null: whoever did, an
  // admin's delete).
  Deleted Delete(const std::string& id, const std::string* owner = nullptr);
  // The meshes `viewer` registered (null: every mesh, an admin's view),
  // ordered by id, from id `from` on, at most `max_meshes`.
  std::vector<std::pair<std::string, std::shared_ptr<const Mesh>>> List(
      const std::string* viewer = nullptr, const std::string& from = "",
      size_t max_meshes = static_cast<size_t>(-1)) const;
  size_t size() const;
  size_t capacity() const { return max_meshes_; }

 private:
  struct Entry {
    std::shared_ptr<const Mesh> mesh;
    std::string owner;
    std::set<std::string> registrants;  // the owner and later ones
    FairShares::Hold place;             // the owner's, in room_
  };

  // Room for a new mesh `owner` creates, or why there is none.
  absl::StatusOr<FairShares::Hold> RoomFor(const std::string& owner);

  const size_t max_meshes_;
  const size_t max_per_owner_;
  // The registry's room, a place per mesh held by its owner (before
  // meshes_, whose entries give their places back).
  FairShares room_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> meshes_ ABSL_GUARDED_BY(mu_);
  // How many meshes each credential registered (those with none are
  // dropped).
  std::map<std::string, size_t> owned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::server

#endif  // RESHARD_SERVER_MESH_REGISTRY_H_
