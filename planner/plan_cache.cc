#include "planner/plan_cache.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {

std::string PlanFingerprint(const Mesh& mesh, const PlanRequest& request) {
  const PlanOptions& o = request.options;
  std::string key;
  key.reserve(mesh.PlanningText().size() + 160);
  absl::StrAppend(&key, "m", mesh.PlanningText());
  absl::StrAppend(
      &key, "|t", absl::StrJoin(request.tensor.shape(), ","), ":",
      DTypeName(request.tensor.dtype()), "|", request.src.ToString(), "|",
      request.dst.ToString(), "|", PlannerName(o.planner), ",",
      CostModelName(o.cost_model), ",", o.merge, ",", o.devices_per_host, ",",
      FlattenPolicyName(o.flatten_policy), ",", o.search_budget, ",",
      o.max_peak_bytes ? absl::StrCat(*o.max_peak_bytes) : "-");
  return key;
}

PlanCache::PlanCache(size_t capacity)
    : capacity_(std::max<size_t>(1, capacity)) {}

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
