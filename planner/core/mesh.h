// A Mesh is an immutable, validated N-D device mesh: its shape, its dim names,
// the global rank at every position, the flattened groups that exist as
// communicators, and per-dim link parameters.
//
// Positions are row-major indices into the mesh; ranks are what the rank map
// assigns to them. Group math follows docs/DESIGN.md §2.1 and is a pure
// function of the shape: a group over ordered dims (g1..gk) contains the
// positions that differ from p only on those dims, enumerated with g1
// outermost.
//
// A Mesh is safe for concurrent use from multiple threads (it is immutable).
#ifndef RESHARD_PLANNER_CORE_MESH_H_
#define RESHARD_PLANNER_CORE_MESH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace reshard {

inline constexpr int kMaxMeshDims = 8;
inline constexpr int64_t kMaxWorldSize = 2147483647;  // NCCL ranks are int.

// The accepted link parameters. Within them every step's time is finite:
// the slowest step (2^63 bytes at twice the ring factor over the slowest
// link, 2(2^31 - 1) hops at the longest latency) takes about 2e22 us, so
// no cost, sum of costs or search estimate can become inf or NaN (a
// bandwidth of 5e-324 GB/s would make every step infinite).
inline constexpr double kMinLinkBandwidthGBps = 1e-6;  // 1 kB/s
inline constexpr double kMaxLinkBandwidthGBps = 1e9;   // 1 EB/s
inline constexpr double kMaxLinkLatencyUs = 1e9;       // 1000 s per hop

// Link parameters of one mesh dim; unset fields take the cost model's
// defaults. Mesh::Create accepts bandwidths in [kMinLinkBandwidthGBps,
// kMaxLinkBandwidthGBps] and latencies in [0, kMaxLinkLatencyUs].
struct LinkParams {
  std::optional<double> bandwidth_gbps;  // GB/s, GB = 1e9 bytes.
  std::optional<double> latency_us;      // per hop.
  // The latency of one all_to_all on the group, µs, instead of one hop's
  // (calibration measures it: it grows with the group's size where its
  // ranks wait to be scheduled; docs/DESIGN.md §3.3).
  std::optional<double> all_to_all_us;
  bool operator==(const LinkParams&) const = default;
};

// What a caller supplies to build a Mesh; everything is validated by
// Mesh::Create.
struct MeshSpec {
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;               // empty: "d0", "d1", ...
  std::vector<int64_t> rank_map;                    // empty: identity 0..N-1.
  std::vector<std::vector<std::string>> flattened;  // groups by dim name.
  std::vector<LinkParams> links;                    // empty or one per dim.
  // Empty or one per entry of `flattened`: a measured link of the group
  // itself (calibration finds a ring over two tiers faster or slower than
  // its slowest dim), overriding what its dims give it under the alpha_beta
  // model.
  std::vector<LinkParams> flattened_links;
  // The rate, GB/s, at which a rank copies bytes locally: packing and
  // unpacking a collective's blocks that do not lie in place, and local
  // steps (calibration measures it; unset: the cost model's default). Same
  // range as a link's bandwidth.
  std::optional<double> copy_gbps;
  // The rate, GB/s of buffer, at which a rank reduces what it receives in
  // a reduce_scatter or all_reduce (ReducedFactor): on CPUs, ranks sharing
  // cores reduce slower than their links move the bytes (calibration
  // measures it; unset: reductions cost nothing beyond the links). Same
  // range as a link's bandwidth.
  std::optional<double> reduce_gbps;
  // What every collective step costs beyond its links, µs: launching it and
  // waking its ranks (calibration measures it; unset: the cost model's
  // kBaseLatencyUs). Same range as a link's latency.
  std::optional<double> base_us;
};

// An ordered tuple of distinct mesh dims, g1 outermost. Inline storage:
// searches create millions of them.
using Group = absl::InlinedVector<int, kMaxMeshDims>;

class Mesh {
 public:
  // Validates `spec`. INVALID_ARGUMENT names the offending field, e.g.
  // `mesh.dim_names[2]: duplicate name "B"`.
  static absl::StatusOr<Mesh> Create(MeshSpec spec);

  int ndim() const { return static_cast<int>(shape_.size()); }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size(int dim) const { return shape_[dim]; }
  int64_t world_size() const { return world_size_; }
  const std::vector<std::string>& dim_names() const { return dim_names_; }
  const std::vector<Group>& flattened() const { return flattened_; }
  const std::vector<LinkParams>& links() const { return links_; }
  // One per flattened() group: its own link (unset fields: none).
  const std::vector<LinkParams>& flattened_links() const {
    return flattened_links_;
  }
  // The own link of the registered group serving `group` (ServingGroup)
  // when `group` has two or more dims of size > 1; unset fields otherwise.
  LinkParams FlattenedLink(absl::Span<const int> group) const;
  // MeshSpec::copy_gbps.
  const std::optional<double>& copy_gbps() const { return copy_gbps_; }
  // MeshSpec::reduce_gbps.
  const std::optional<double>& reduce_gbps() const { return reduce_gbps_; }
  // MeshSpec::base_us.
  const std::optional<double>& base_us() const { return base_us_; }
  bool has_identity_rank_map() const { return rank_map_.empty(); }
  // The rank map as given; empty for the identity.
  const std::vector<int64_t>& rank_map() const { return rank_map_; }
  // The position holding global rank `rank`, or -1 when no position does.
  int64_t PositionOfRank(int64_t rank) const;

  // The dim named `name`, or -1.
  int DimIndex(absl::string_view name) const;
  // True when `group` has a communicator without planning one: it has at
  // most one dim of size > 1 (a mesh dim's own group), or a registered
  // flattened group serves it (ServingGroup).
  bool IsRegistered(absl::Span<const int> group) const;
  // The first registered flattened group, in registration order, with the
  // same ranks in the same order as `group` (SameRanks), as PyTorch's lookup
  // of a flattened mesh by layout finds it; nullptr when none is. A size-1
  // dim changes neither the members nor their order, so (B,C) is served by
  // a registered (B,C,D) where D has size 1.
  const Group* ServingGroup(absl::Span<const int> group) const;
  // True when `a` and `b` hold the same ranks in the same order at every
  // position: equal once their size-1 dims are dropped.
  bool SameRanks(absl::Span<const int> a, absl::Span<const int> b) const;
  // `group` without its size-1 dims (its first dim when all have size 1):
  // one key for all groups with the same ranks in the same order.
  Group WithoutUnitDims(absl::Span<const int> group) const;
  // A step's group by name: a single dim's name; for a group of two or more
  // dims (a merged step's) that a registered group serves, that group's
  // name (the communicator PyTorch runs it on, also where all but one of
  // the dims have size 1); otherwise DimsName.
  std::string GroupName(absl::Span<const int> group) const;
  // Dim names joined by "_" ("A_C"), the name PyTorch gives a flattened mesh.
  std::string DimsName(absl::Span<const int> group) const;
  // Product of the sizes of `group`'s dims (inline: the searches price
  // millions of edges, each asking it several times).
  int64_t GroupSize(absl::Span<const int> group) const {
    int64_t n = 1;
    for (int d : group) n *= shape_[d];
    return n;
  }

  int64_t Stride(int dim) const { return strides_[dim]; }
  int64_t Coordinate(int64_t position, int dim) const {
    return (position / strides_[dim]) % shape_[dim];
  }
  int64_t RankAt(int64_t position) const {
    return rank_map_.empty() ? position : rank_map_[position];
  }

  // The position of member 0 of `position`'s group over `group` (its
  // coordinates on the group's dims 0).
  int64_t GroupBase(int64_t position, absl::Span<const int> group) const {
    for (int d : group) position -= Coordinate(position, d) * strides_[d];
    return position;
  }
  // The positions of `position`'s group over `group`, in group order.
  std::vector<int64_t> GroupPositions(int64_t position,
                                      absl::Span<const int> group) const;
  // The global ranks of `position`'s group over `group`, in group order.
  std::vector<int64_t> GroupRanks(int64_t position,
                                  absl::Span<const int> group) const;
  // `position`'s index within its group over `group`.
  int64_t IndexInGroup(int64_t position, absl::Span<const int> group) const;
  // The position of the member with index `index` in `position`'s group.
  int64_t MemberPosition(int64_t position, absl::Span<const int> group,
                         int64_t index) const;

  // This mesh with `group` (distinct in-range dims, >= 2 of them, not yet
  // registered) registered as well: planning "what if this group existed"
  // prices the remedy of a missing_flattened_group warning.
  Mesh WithFlattened(absl::Span<const int> group) const;

  // Checks that `group` names distinct, in-range dims; `field` prefixes the
  // message.
  absl::Status ValidateGroup(absl::Span<const int> group,
                             absl::string_view field) const;

  // The spec that creates this mesh again (groups by name, the identity
  // rank map as empty, links as given).
  MeshSpec ToSpec() const;

  // Everything the mesh is, as text: shape, names, (rank map,) flattened
  // groups and links (the flattened groups' own links, the copy rate, the
  // base latency and the reduction rate only when set, so that meshes
  // without them keep their ids). Planning reads all but the rank map (plans
  // are rank-independent), so cache keys omit it; mesh ids include it.
  std::string CanonicalText(bool with_rank_map) const;
  // CanonicalText(false), computed once (cache keys are built per request).
  const std::string& PlanningText() const { return planning_text_; }

  bool operator==(const Mesh& other) const;

 private:
  Mesh() = default;
  // Create's part for spec.flattened and spec.flattened_links.
  absl::Status AddFlattened(const MeshSpec& spec);

  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  std::vector<std::string> dim_names_;
  std::vector<int64_t> rank_map_;  // empty = identity.
  std::vector<Group> flattened_;
  std::vector<LinkParams> links_;
  std::vector<LinkParams> flattened_links_;  // parallel to flattened_
  std::optional<double> copy_gbps_;
  std::optional<double> reduce_gbps_;
  std::optional<double> base_us_;
  int64_t world_size_ = 1;
  std::string planning_text_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_MESH_H_
