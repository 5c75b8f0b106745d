#include "agent/tensor_binding.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/core/local_layout.h"

namespace reshard::agent {
namespace {

std::string ShapeText(DType dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(DTypeName(dtype), " [", absl::StrJoin(shape, ", "), "]");
}

// The registered tensor `name` (binding `field`) for this rank's block of
// `side` in `dtype`, whose registered layout (where given) must be the
// side's. The Coordinator names the rank in the run's failure.
absl::StatusOr<std::shared_ptr<SharedMemory>> Find(
    const TensorRegistry& registry, const std::string& field,
    const std::string& name, DType dtype, const BoundRun::Side& side) {
  std::optional<TensorEntry> entry = registry.Find(name);
  if (!entry.has_value()) {
    return absl::NotFoundError(absl::StrCat(field, ": no tensor \"", name,
                                            "\" is registered at this agent"));
  }
  if (entry->layout.has_value()) {
    if (std::optional<std::string> why =
            LayoutDifference(*entry->layout, side.layout)) {
      return absl::FailedPreconditionError(absl::StrCat(
          field, ": \"", name, "\" is ", *why, "; no data was moved"));
    }
  }
  const std::vector<int64_t> shape = side.Shape();
  if (entry->dtype != dtype || entry->shape != shape) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": \"", name, "\" is registered as ",
                     ShapeText(entry->dtype, entry->shape), "; the plan needs ",
                     ShapeText(dtype, shape), " on this rank"));
  }
  return entry->memory;
}

// Allocates `name` for a destination of `dtype` and `shape` unless it is
// registered already.
absl::Status AllocateMissing(TensorRegistry& registry, const std::string& field,
                             const std::string& name, DType dtype,
                             const std::vector<int64_t>& shape) {
  if (registry.Find(name).has_value()) return absl::OkStatus();
  TensorRequest request{name, dtype, shape, 0, ItemSize(dtype)};
  for (int64_t d : shape) request.length *= d;
  absl::Status s = registry.Allocate(request);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(field, ": ", s.message()));
}

// One binding per item, or INVALID_ARGUMENT.
absl::Status CheckBindings(size_t names, size_t items) {
  if (names == items) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("run.tensors: ", names, " bindings for ", items, " items"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<BoundRun>> BoundRun::Bind(
    const Mesh& mesh, const executor::BatchWork& work, int64_t rank,
    const std::vector<TensorNames>& names, bool staging,
    TensorRegistry& registry) {
  absl::Status s = CheckBindings(names.size(), work.plans.size());
  if (!s.ok()) return s;
  auto bound = std::unique_ptr<BoundRun>(new BoundRun(names, staging));
  const int64_t position = mesh.PositionOfRank(rank);
  for (size_t t = 0; t < names.size() && s.ok(); ++t) {
    const Plan& plan = work.plans[t];
    const std::vector<int64_t>& shape = plan.tensor.shape();
    s = bound->BindItem(t, plan.tensor.dtype(),
                        Side{{shape, mesh, plan.src}, position},
                        Side{{shape, mesh, plan.dst}, position}, registry);
  }
  if (!s.ok()) return s;
  return bound;
}

absl::StatusOr<std::unique_ptr<BoundRun>> BoundRun::BindCross(
    absl::Span<const executor::CrossWork> items, int64_t rank,
    const std::vector<TensorNames>& names, bool staging,
    TensorRegistry& registry) {
  absl::Status s = CheckBindings(names.size(), items.size());
  if (!s.ok()) return s;
  auto bound = std::unique_ptr<BoundRun>(new BoundRun(names, staging));
  for (size_t t = 0; t < items.size() && s.ok(); ++t) {
    const executor::CrossWork& work = items[t];
    const CrossMeshPlan& plan = work.plan;
    const std::vector<int64_t>& shape = plan.tensor.shape();
    std::optional<Side> src, dst;
    if (const int64_t p = work.src_mesh.PositionOfRank(rank); p >= 0) {
      src = Side{{shape, work.src_mesh, plan.src}, p};
    }
    if (const int64_t p = work.dst_mesh.PositionOfRank(rank); p >= 0) {
      dst = Side{{shape, work.dst_mesh, plan.dst}, p};
    }
    s = bound->BindItem(t, plan.tensor.dtype(), src, dst, registry);
  }
  if (!s.ok()) return s;
  return bound;
}

std::vector<int64_t> BoundRun::Side::Shape() const {
  return LocalBox(layout.mesh, layout.state, layout.global_shape, position)
      .extent;
}

absl::Status BoundRun::BindItem(size_t t, DType dtype,
                                const std::optional<Side>& src,
                                const std::optional<Side>& dst,
                                TensorRegistry& registry) {
  const std::string field = absl::StrCat("tensors[", t, "]");
  const TensorNames& names = names_[t];
  const void* in_data = nullptr;
  if (src.has_value()) {
    absl::StatusOr<std::shared_ptr<SharedMemory>> in =
        Find(registry, field + ".source", names.source, dtype, *src);
    if (!in.ok()) return in.status();
    in_data = (*in)->data();
    source_items_.push_back(t);
    sources_.push_back(*std::move(in));
  }
  tensors_.sources.push_back(in_data);
  if (!dst.has_value()) {
    tensors_.results.push_back(nullptr);
    return absl::OkStatus();
  }
  if (names.allocate) {
    absl::Status s = AllocateMissing(registry, field + ".into", names.into,
                                     dtype, dst->Shape());
    if (!s.ok()) return s;
  }
  absl::StatusOr<std::shared_ptr<SharedMemory>> out =
      Find(registry, field + ".into", names.into, dtype, *dst);
  if (!out.ok()) return out.status();
  if (staging_mode_) {
    staging_.push_back(std::make_unique_for_overwrite<char[]>((*out)->bytes()));
    staging_sizes_.push_back((*out)->bytes());
    tensors_.results.push_back(staging_.back().get());
  } else {
    tensors_.results.push_back((*out)->data());
  }
  destination_items_.push_back(t);
  destinations_.push_back(*std::move(out));
  return absl::OkStatus();
}

int64_t BoundRun::staging_bytes() const {
  int64_t bytes = 0;
  for (int64_t size : staging_sizes_) bytes += size;
  return bytes;
}

bool BoundRun::StillBound(const std::vector<TensorNames>& names, bool staging,
                          const TensorRegistry& registry) const {
  if (names_ != names || staging != staging_mode_) return false;
  auto same = [&registry](const std::string& name,
                          const std::shared_ptr<SharedMemory>& memory) {
    std::optional<TensorEntry> now = registry.Find(name);
    return now.has_value() && now->memory == memory;
  };
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (!same(names_[source_items_[i]].source, sources_[i])) return false;
  }
  for (size_t d = 0; d < destinations_.size(); ++d) {
    if (!same(names_[destination_items_[d]].into, destinations_[d])) {
      return false;
    }
  }
  return true;
}

absl::Status BoundRun::Commit(const TensorRegistry& registry) const {
  for (size_t d = 0; d < destinations_.size(); ++d) {
    const size_t t = destination_items_[d];
    std::optional<TensorEntry> now = registry.Find(names_[t].into);
    if (!now.has_value() || now->memory != destinations_[d]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tensors[", t, "].into: \"", names_[t].into,
          "\" was unregistered or replaced during the run; nothing was "
          "written"));
    }
  }
  for (size_t t = 0; t < staging_.size(); ++t) {
    std::memcpy(destinations_[t]->data(), staging_[t].get(), staging_sizes_[t]);
  }
  return absl::OkStatus();
}

}  // namespace reshard::agent
