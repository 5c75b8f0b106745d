// A PlanCache is a bounded, thread-safe LRU map from a request's canonical
// fingerprint to its plan, so that the same request returns the same plan
// (bit for bit) without searching again. Plans are rank-independent, so the
// fingerprint covers the mesh content that planning reads (shape, names,
// flattened groups, links — not the rank map), the tensor, src, dst,
// every planner option and the request's cache scope (a server's callers
// each get their own, so a hit never tells one what another planned).
#ifndef RESHARD_PLANNER_SEARCH_PLAN_CACHE_H_
#define RESHARD_PLANNER_SEARCH_PLAN_CACHE_H_

#include <cstdint>
#include <list>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "planner/core/plan.h"
#include "planner/search/planner.h"

namespace reshard {

// The canonical cache key of planning `request` on `mesh`.
std::string PlanFingerprint(const Mesh& mesh, const PlanRequest& request);

class PlanCache {
 public:
  // Holds at most `capacity` plans; 0 turns the cache off (Lookup always
  // misses, Insert keeps nothing).
  explicit PlanCache(size_t capacity);

  // The cached plan (marked cache_hit) and refreshes its recency.
  std::optional<Plan> Lookup(const std::string& key);
  // Whether `key` is cached, counting no hit or miss.
  bool Contains(const std::string& key) const;
  // Inserts or replaces; evicts the least recently used entry when full.
  void Insert(const std::string& key, const Plan& plan);

  size_t size() const;
  size_t capacity() const { return capacity_; }
  int64_t hits() const;
  int64_t misses() const;

 private:
  using Entry = std::pair<std::string, Plan>;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // front = most recent
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_
      ABSL_GUARDED_BY(mu_);
  int64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

// MakePlan through `cache`: a hit returns the stored plan with cache_hit
// set; a miss plans and stores successful results.
absl::StatusOr<Plan> MakePlanCached(const Mesh& mesh,
                                    const PlanRequest& request,
                                    PlanCache& cache,
                                    const StopCheck& stop = {});

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_PLAN_CACHE_H_
