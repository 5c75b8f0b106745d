#include "planner/core/mesh.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_text.h"
#include "planner/core/field_error.h"

namespace reshard {
namespace {

bool IsValidDimName(absl::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
  });
}

// INVALID_ARGUMENT naming `field` unless `value` lies in [lo, hi] (NaN
// does not).
absl::Status CheckInRange(double value, double lo, double hi,
                          absl::string_view unit, const std::string& field) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return InvalidField(field,
                      absl::StrCat("must be in [", ShortestRoundTrip(lo), ", ",
                                   ShortestRoundTrip(hi), "] ", unit, ", got ",
                                   ShortestRoundTrip(value)));
}

// An optional number and the range it must lie in when set.
struct RangedField {
  const std::optional<double>* value;
  double lo, hi;
  const char* unit;
  const char* name;
};

// Checks every set field of `fields`; `prefix` and the field's name name
// one out of range.
absl::Status CheckRangedFields(absl::Span<const RangedField> fields,
                               absl::string_view prefix) {
  for (const RangedField& f : fields) {
    if (!f.value->has_value()) continue;
    absl::Status s = CheckInRange(**f.value, f.lo, f.hi, f.unit,
                                  absl::StrCat(prefix, f.name));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// `prefix` names the link ("mesh.links[2]").
absl::Status ValidateLink(const LinkParams& link, const std::string& prefix) {
  const RangedField fields[] = {
      {&link.bandwidth_gbps, kMinLinkBandwidthGBps, kMaxLinkBandwidthGBps,
       "GB/s", "bandwidth_gbps"},
      {&link.latency_us, 0, kMaxLinkLatencyUs, "us", "latency_us"},
      {&link.all_to_all_us, 0, kMaxLinkLatencyUs, "us", "all_to_all_us"}};
  return CheckRangedFields(fields, absl::StrCat(prefix, "."));
}

// The world size of a mesh of `shape`.
absl::StatusOr<int64_t> CheckShape(const std::vector<int64_t>& shape) {
  if (shape.empty()) return InvalidField("mesh.shape", "must have >= 1 dim");
  if (shape.size() > kMaxMeshDims) {
    return InvalidField("mesh.shape",
                        absl::StrCat("has ", shape.size(), " dims; at most ",
                                     kMaxMeshDims, " are supported"));
  }
  int64_t world = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 1) {
      return InvalidField(absl::StrCat("mesh.shape[", d, "]"),
                          absl::StrCat("size must be >= 1, got ", shape[d]));
    }
    if (shape[d] > kMaxWorldSize / world) {
      return InvalidField("mesh.shape",
                          absl::StrCat("world size exceeds ", kMaxWorldSize,
                                       " (NCCL ranks are int)"));
    }
    world *= shape[d];
  }
  return world;
}

// Fills in default names ("d0", "d1", ...) when there are none.
absl::Status CheckDimNames(std::vector<std::string>& names, int ndim) {
  if (names.empty()) {
    for (int d = 0; d < ndim; ++d) names.push_back(absl::StrCat("d", d));
  }
  if (static_cast<int>(names.size()) != ndim) {
    return InvalidField("mesh.dim_names",
                        absl::StrCat("has ", names.size(),
                                     " names for a mesh of ", ndim, " dims"));
  }
  absl::flat_hash_set<std::string> seen;
  for (int d = 0; d < ndim; ++d) {
    const std::string& name = names[d];
    const std::string field = absl::StrCat("mesh.dim_names[", d, "]");
    if (!IsValidDimName(name)) {
      return InvalidField(field, absl::StrCat("\"", name,
                                              "\" must be non-empty letters, "
                                              "digits or '_'"));
    }
    if (!seen.insert(name).second) {
      return InvalidField(field, absl::StrCat("duplicate name \"", name, "\""));
    }
  }
  return absl::OkStatus();
}

// True when a (non-empty, valid) rank map is the identity.
absl::StatusOr<bool> CheckRankMap(const std::vector<int64_t>& rank_map,
                                  int64_t world) {
  if (static_cast<int64_t>(rank_map.size()) != world) {
    return InvalidField("mesh.rank_map", absl::StrCat("has ", rank_map.size(),
                                                      " ranks for a mesh of ",
                                                      world, " devices"));
  }
  absl::flat_hash_set<int64_t> ranks;
  bool identity = true;
  for (int64_t p = 0; p < world; ++p) {
    const int64_t r = rank_map[p];
    const std::string field = absl::StrCat("mesh.rank_map[", p, "]");
    if (r < 0 || r > kMaxWorldSize) {
      return InvalidField(field,
                          absl::StrCat("rank ", r, " is out of range [0, ",
                                       kMaxWorldSize, "]"));
    }
    if (!ranks.insert(r).second) {
      return InvalidField(field, absl::StrCat("duplicate rank ", r));
    }
    identity = identity && r == p;
  }
  return identity;
}

// One flattened group, by dim name, as dim indices of `mesh`.
absl::StatusOr<Group> ResolveFlattened(const Mesh& mesh,
                                       const std::vector<std::string>& names,
                                       const std::string& field) {
  if (names.size() < 2) {
    return InvalidField(
        field,
        absl::StrCat("a flattened group needs >= 2 dims, got ", names.size()));
  }
  Group group;
  for (size_t i = 0; i < names.size(); ++i) {
    const int dim = mesh.DimIndex(names[i]);
    if (dim < 0) {
      return InvalidField(absl::StrCat(field, "[", i, "]"),
                          absl::StrCat("unknown dim \"", names[i], "\""));
    }
    if (std::find(group.begin(), group.end(), dim) != group.end()) {
      return InvalidField(absl::StrCat(field, "[", i, "]"),
                          absl::StrCat("dim \"", names[i], "\" is repeated"));
    }
    group.push_back(dim);
  }
  return group;
}

absl::Status CheckLinks(const std::vector<LinkParams>& links, int ndim) {
  if (static_cast<int>(links.size()) != ndim) {
    return InvalidField("mesh.links",
                        absl::StrCat("has ", links.size(),
                                     " entries for a mesh of ", ndim, " dims"));
  }
  for (int d = 0; d < ndim; ++d) {
    absl::Status s =
        ValidateLink(links[d], absl::StrCat("mesh.links[", d, "]"));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// The mesh-wide measured rates and latency, where set.
absl::Status CheckMeshRates(const MeshSpec& spec) {
  const RangedField fields[] = {
      {&spec.copy_gbps, kMinLinkBandwidthGBps, kMaxLinkBandwidthGBps, "GB/s",
       "copy_gbps"},
      {&spec.reduce_gbps, kMinLinkBandwidthGBps, kMaxLinkBandwidthGBps, "GB/s",
       "reduce_gbps"},
      {&spec.base_us, 0, kMaxLinkLatencyUs, "us", "base_us"}};
  return CheckRangedFields(fields, "mesh.");
}

}  // namespace

absl::StatusOr<Mesh> Mesh::Create(MeshSpec spec) {
  Mesh mesh;
  absl::StatusOr<int64_t> world = CheckShape(spec.shape);
  if (!world.ok()) return world.status();
  mesh.world_size_ = *world;
  mesh.shape_ = std::move(spec.shape);
  const int ndim = mesh.ndim();
  mesh.strides_.assign(ndim, 1);
  for (int d = ndim - 2; d >= 0; --d) {
    mesh.strides_[d] = mesh.strides_[d + 1] * mesh.shape_[d + 1];
  }
  if (absl::Status s = CheckDimNames(spec.dim_names, ndim); !s.ok()) return s;
  mesh.dim_names_ = std::move(spec.dim_names);
  if (!spec.rank_map.empty()) {
    absl::StatusOr<bool> identity = CheckRankMap(spec.rank_map, *world);
    if (!identity.ok()) return identity.status();
    if (!*identity) mesh.rank_map_ = std::move(spec.rank_map);
  }
  if (absl::Status s = mesh.AddFlattened(spec); !s.ok()) return s;
  if (!spec.links.empty()) {
    if (absl::Status s = CheckLinks(spec.links, ndim); !s.ok()) return s;
    mesh.links_ = std::move(spec.links);
  } else {
    mesh.links_.assign(ndim, LinkParams{});
  }
  if (absl::Status s = CheckMeshRates(spec); !s.ok()) return s;
  mesh.copy_gbps_ = spec.copy_gbps;
  mesh.reduce_gbps_ = spec.reduce_gbps;
  mesh.base_us_ = spec.base_us;
  mesh.planning_text_ = mesh.CanonicalText(false);
  return mesh;
}

int64_t Mesh::PositionOfRank(int64_t rank) const {
  if (rank_map_.empty()) return rank >= 0 && rank < world_size_ ? rank : -1;
  for (int64_t p = 0; p < world_size_; ++p) {
    if (rank_map_[p] == rank) return p;
  }
  return -1;
}

int Mesh::DimIndex(absl::string_view name) const {
  for (int d = 0; d < ndim(); ++d) {
    if (dim_names_[d] == name) return d;
  }
  return -1;
}

bool Mesh::IsRegistered(absl::Span<const int> group) const {
  const auto non_unit = std::count_if(group.begin(), group.end(),
                                      [&](int d) { return shape_[d] > 1; });
  return non_unit <= 1 || ServingGroup(group) != nullptr;
}

const Group* Mesh::ServingGroup(absl::Span<const int> group) const {
  for (const Group& g : flattened_) {
    if (SameRanks(g, group)) return &g;
  }
  return nullptr;
}

bool Mesh::SameRanks(absl::Span<const int> a, absl::Span<const int> b) const {
  size_t i = 0;
  size_t j = 0;
  while (true) {
    while (i < a.size() && shape_[a[i]] == 1) ++i;
    while (j < b.size() && shape_[b[j]] == 1) ++j;
    if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
    if (a[i++] != b[j++]) return false;
  }
}

Group Mesh::WithoutUnitDims(absl::Span<const int> group) const {
  Group dims;
  for (int d : group) {
    if (shape_[d] > 1) dims.push_back(d);
  }
  if (dims.empty() && !group.empty()) dims.push_back(group[0]);
  return dims;
}

std::string Mesh::GroupName(absl::Span<const int> group) const {
  if (group.size() >= 2) {
    if (const Group* serving = ServingGroup(group)) group = *serving;
  }
  return DimsName(group);
}

std::string Mesh::DimsName(absl::Span<const int> group) const {
  std::vector<absl::string_view> names;
  for (int d : group) names.push_back(dim_names_[d]);
  return absl::StrJoin(names, "_");
}

std::vector<int64_t> Mesh::GroupPositions(int64_t position,
                                          absl::Span<const int> group) const {
  std::vector<int64_t> members{GroupBase(position, group)};
  // Enumerate lexicographically with group[0] outermost: expand dims in order.
  for (int d : group) {
    std::vector<int64_t> next;
    next.reserve(members.size() * shape_[d]);
    for (int64_t m : members) {
      for (int64_t a = 0; a < shape_[d]; ++a)
        next.push_back(m + a * strides_[d]);
    }
    members = std::move(next);
  }
  return members;
}

std::vector<int64_t> Mesh::GroupRanks(int64_t position,
                                      absl::Span<const int> group) const {
  std::vector<int64_t> ranks = GroupPositions(position, group);
  for (int64_t& r : ranks) r = RankAt(r);
  return ranks;
}

int64_t Mesh::IndexInGroup(int64_t position,
                           absl::Span<const int> group) const {
  int64_t index = 0;
  for (int d : group) index = index * shape_[d] + Coordinate(position, d);
  return index;
}

int64_t Mesh::MemberPosition(int64_t position, absl::Span<const int> group,
                             int64_t index) const {
  int64_t result = position;
  for (int i = static_cast<int>(group.size()) - 1; i >= 0; --i) {
    const int d = group[i];
    const int64_t a = index % shape_[d];
    index /= shape_[d];
    result += (a - Coordinate(position, d)) * strides_[d];
  }
  return result;
}

absl::Status Mesh::ValidateGroup(absl::Span<const int> group,
                                 absl::string_view field) const {
  if (group.empty())
    return InvalidField(field, "group must name >= 1 mesh dim");
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] < 0 || group[i] >= ndim()) {
      return InvalidField(absl::StrCat(field, "[", i, "]"),
                          absl::StrCat("mesh dim ", group[i],
                                       " out of range [0, ", ndim(), ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (group[j] == group[i]) {
        return InvalidField(
            absl::StrCat(field, "[", i, "]"),
            absl::StrCat("mesh dim ", group[i], " is repeated"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Mesh::AddFlattened(const MeshSpec& spec) {
  const size_t count = spec.flattened.size();
  if (!spec.flattened_links.empty() && spec.flattened_links.size() != count) {
    return InvalidField(
        "mesh.flattened_links",
        absl::StrCat("has ", spec.flattened_links.size(), " entries for ",
                     count, " flattened groups"));
  }
  for (size_t f = 0; f < count; ++f) {
    absl::StatusOr<Group> group = ResolveFlattened(
        *this, spec.flattened[f], absl::StrCat("mesh.flattened[", f, "]"));
    if (!group.ok()) return group.status();
    LinkParams link;
    if (!spec.flattened_links.empty()) {
      link = spec.flattened_links[f];
      absl::Status s =
          ValidateLink(link, absl::StrCat("mesh.flattened_links[", f, "]"));
      if (!s.ok()) return s;
    }
    // Registering the same group twice is harmless; keep the first.
    if (std::find(flattened_.begin(), flattened_.end(), *group) ==
        flattened_.end()) {
      flattened_.push_back(*std::move(group));
      flattened_links_.push_back(link);
    }
  }
  return absl::OkStatus();
}

LinkParams Mesh::FlattenedLink(absl::Span<const int> group) const {
  const auto non_unit = std::count_if(group.begin(), group.end(),
                                      [&](int d) { return shape_[d] > 1; });
  if (non_unit < 2) return {};
  const Group* serving = ServingGroup(group);
  if (serving == nullptr) return {};
  return flattened_links_[serving - flattened_.data()];
}

Mesh Mesh::WithFlattened(absl::Span<const int> group) const {
  Mesh mesh = *this;
  mesh.flattened_.emplace_back(group.begin(), group.end());
  mesh.flattened_links_.emplace_back();
  mesh.planning_text_ = mesh.CanonicalText(false);
  return mesh;
}

MeshSpec Mesh::ToSpec() const {
  MeshSpec spec;
  spec.shape = shape_;
  spec.dim_names = dim_names_;
  spec.rank_map = rank_map_;
  for (const Group& g : flattened_) {
    std::vector<std::string>& names = spec.flattened.emplace_back();
    for (int d : g) names.push_back(dim_names_[d]);
  }
  spec.links = links_;
  spec.flattened_links = flattened_links_;
  spec.copy_gbps = copy_gbps_;
  spec.reduce_gbps = reduce_gbps_;
  spec.base_us = base_us_;
  return spec;
}

std::string Mesh::CanonicalText(bool with_rank_map) const {
  auto number = [](const std::optional<double>& v) -> std::string {
    return v.has_value() ? ShortestRoundTrip(*v) : "-";
  };
  std::string text = absl::StrCat(absl::StrJoin(shape_, ","), "|",
                                  absl::StrJoin(dim_names_, ","), "|");
  if (with_rank_map) absl::StrAppend(&text, absl::StrJoin(rank_map_, ","), "|");
  for (const Group& g : flattened_) {
    absl::StrAppend(&text, absl::StrJoin(g, "."), ";");
  }
  absl::StrAppend(&text, "|");
  // A link's all_to_all latency only when set, so older meshes keep ids.
  auto link = [&number](const LinkParams& l) {
    std::string out =
        absl::StrCat(number(l.bandwidth_gbps), ":", number(l.latency_us));
    if (l.all_to_all_us.has_value()) {
      absl::StrAppend(&out, ":", number(l.all_to_all_us));
    }
    return absl::StrCat(out, ";");
  };
  for (const LinkParams& l : links_) absl::StrAppend(&text, link(l));
  const bool group_links =
      std::any_of(flattened_links_.begin(), flattened_links_.end(),
                  [](const LinkParams& l) { return l != LinkParams{}; });
  if (group_links) {
    absl::StrAppend(&text, "|");
    for (const LinkParams& l : flattened_links_) {
      absl::StrAppend(&text, link(l));
    }
  }
  if (copy_gbps_.has_value()) {
    absl::StrAppend(&text, "|copy:", number(copy_gbps_));
  }
  if (base_us_.has_value()) {
    absl::StrAppend(&text, "|base:", number(base_us_));
  }
  if (reduce_gbps_.has_value()) {
    absl::StrAppend(&text, "|reduce:", number(reduce_gbps_));
  }
  return text;
}

bool Mesh::operator==(const Mesh& other) const {
  return shape_ == other.shape_ && dim_names_ == other.dim_names_ &&
         rank_map_ == other.rank_map_ && flattened_ == other.flattened_ &&
         links_ == other.links_ && flattened_links_ == other.flattened_links_ &&
         copy_gbps_ == other.copy_gbps_ && reduce_gbps_ == other.reduce_gbps_ &&
         base_us_ == other.base_us_;
}

}  // namespace reshard
