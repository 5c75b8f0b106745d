#include "planner/search/plan_cache.h"

#include <type_traits>

namespace reshard {

namespace {

// Appends the bytes of a trivially copyable value.
template <typename T>
void AppendRaw(std::string& key, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  key.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

}  // namespace

// Binary, built without formatting: lookups build one per request. Every
// part has a fixed size or a length prefix, so distinct requests never
// share a key; states are exact codes (their mesh dim count is the mesh's).
std::string PlanFingerprint(const Mesh& mesh, const PlanRequest& request) {
  const PlanOptions& o = request.options;
  const std::string& mesh_text = mesh.PlanningText();
  std::string key;
  key.reserve(mesh_text.size() + 128);
  AppendRaw(key, mesh_text.size());
  key += mesh_text;
  AppendRaw(key, request.tensor.shape().size());
  for (int64_t extent : request.tensor.shape()) AppendRaw(key, extent);
  AppendRaw(key, request.tensor.dtype());
  AppendRaw(key, request.src.Pack());
  AppendRaw(key, request.dst.Pack());
  AppendRaw(key, o.planner);
  AppendRaw(key, o.cost_model);
  AppendRaw(key, o.merge);
  AppendRaw(key, o.devices_per_host);
  AppendRaw(key, o.flatten_policy);
  AppendRaw(key, o.search_budget);
  AppendRaw(key, o.max_peak_bytes.has_value());
  AppendRaw(key, o.max_peak_bytes.value_or(0));
  AppendRaw(key, o.max_search_bytes);
  AppendRaw(key, request.cache_scope);
  return key;
}

PlanCache::PlanCache(size_t capacity) : capacity_(capacity) {}

std::optional<Plan> PlanCache::Lookup(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  Plan plan = it->second->second;
  plan.cache_hit = true;
  return plan;
}

void PlanCache::Insert(const std::string& key, const Plan& plan) {
  if (capacity_ == 0) return;
  absl::MutexLock lock(&mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    it->second->second = plan;
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key, plan);
  index_[key] = lru_.begin();
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

bool PlanCache::Contains(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  return index_.contains(key);
}

size_t PlanCache::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

int64_t PlanCache::hits() const {
  absl::MutexLock lock(&mu_);
  return hits_;
}

int64_t PlanCache::misses() const {
  absl::MutexLock lock(&mu_);
  return misses_;
}

absl::StatusOr<Plan> MakePlanCached(const Mesh& mesh,
                                    const PlanRequest& request,
                                    PlanCache& cache, const StopCheck& stop) {
  const std::string key = PlanFingerprint(mesh, request);
  if (std::optional<Plan> hit = cache.Lookup(key)) return *std::move(hit);
  absl::StatusOr<Plan> plan = MakePlan(mesh, request, stop);
  if (plan.ok()) cache.Insert(key, *plan);
  return plan;
}

}  // namespace reshard
