#include "planner/cross/cross_batch.h"

#include <algorithm>
#include <chrono>

#include "absl/container/flat_hash_set.h"
#include "planner/cross/cross_cost.h"
#include "planner/cross/cross_planner.h"

namespace reshard {
namespace {

// A bucket being filled: its members and what each rank stages in it.
struct OpenBucket {
  CrossBucket bucket;
  RankLoads loads;
  absl::flat_hash_set<std::pair<int64_t, int64_t>> pairs;

  int64_t Staged(int64_t rank) const {
    auto it = loads.find(rank);
    return it == loads.end() ? 0 : it->second.send + it->second.recv;
  }
  bool Fits(const Transfer& t, int64_t bytes, int64_t bound) const {
    return bucket.bytes == 0 ||
           (Staged(t.from) + bytes <= bound && Staged(t.to) + bytes <= bound);
  }
  void Add(const Transfer& t, int64_t itemsize, std::pair<int, int> member) {
    bucket.members.push_back(member);
    AddTransferBytes({t}, itemsize, loads);
    if (t.from == t.to) return;
    bucket.bytes += t.numel() * itemsize;
    pairs.insert({t.from, t.to});
  }
};

CrossBucket Closed(OpenBucket& open, const LinkParams& link) {
  for (const auto& [rank, b] : open.loads) {
    open.bucket.max_rank_bytes =
        std::max(open.bucket.max_rank_bytes, b.send + b.recv);
  }
  open.bucket.messages = static_cast<int64_t>(open.pairs.size());
  open.bucket.time_us = PhaseTimeUs(open.loads, link);
  return std::move(open.bucket);
}

// Every planned item's transfers, first-fit under `bound`. A copy to
// itself stages nothing and joins the first bucket.
std::vector<CrossBucket> Buckets(const CrossBatchPlan& batch, int64_t bound,
                                 const LinkParams& link) {
  std::vector<OpenBucket> open;
  for (size_t i = 0; i < batch.plans.size(); ++i) {
    if (!batch.plans[i].ok()) continue;
    const CrossMeshPlan& plan = *batch.plans[i];
    const int64_t itemsize = plan.tensor.itemsize();
    for (size_t k = 0; k < plan.transfers.size(); ++k) {
      const Transfer& t = plan.transfers[k];
      const int64_t bytes = t.from == t.to ? 0 : t.numel() * itemsize;
      auto fit = std::find_if(open.begin(), open.end(), [&](const auto& b) {
        return b.Fits(t, bytes, bound);
      });
      if (fit == open.end()) fit = open.emplace(open.end());
      fit->Add(t, itemsize, {static_cast<int>(i), static_cast<int>(k)});
    }
  }
  std::vector<CrossBucket> out;
  for (OpenBucket& b : open) out.push_back(Closed(b, link));
  return out;
}

// The items' pre-steps on each distinct source mesh, and their post-steps,
// bucketed as a single-mesh batch's.
absl::Status ScheduleSteps(const Mesh& src_mesh, const Mesh& dst_mesh,
                           const std::vector<CrossBatchItem>& items,
                           int64_t bound, CrossBatchPlan& batch) {
  std::vector<const Mesh*> sources;
  std::vector<const Plan*> posts;
  CostOptions cost;
  for (size_t i = 0; i < items.size(); ++i) {
    const Mesh* src = items[i].src_mesh ? items[i].src_mesh.get() : &src_mesh;
    if (std::find(sources.begin(), sources.end(), src) == sources.end()) {
      sources.push_back(src);
    }
    const bool ok = batch.plans[i].ok();
    posts.push_back(ok ? &batch.plans[i]->post : nullptr);
    if (ok) cost.devices_per_host = items[i].request.options.devices_per_host;
  }
  absl::StatusOr<BucketSchedule> post =
      ScheduleBuckets(dst_mesh, posts, {bound, cost});
  if (!post.ok()) return post.status();
  batch.post_schedule = *std::move(post);
  for (const Mesh* source : sources) {
    std::vector<const Plan*> pres;
    for (size_t i = 0; i < items.size(); ++i) {
      const Mesh* src = items[i].src_mesh ? items[i].src_mesh.get() : &src_mesh;
      pres.push_back(src == source && batch.plans[i].ok() ? &batch.plans[i]->pre
                                                          : nullptr);
    }
    absl::StatusOr<BucketSchedule> pre =
        ScheduleBuckets(*source, pres, {bound, cost});
    if (!pre.ok()) return pre.status();
    batch.pre_schedules.push_back(*std::move(pre));
  }
  return absl::OkStatus();
}

void AddTotals(CrossBatchPlan& batch) {
  RankLoads loads;
  for (const absl::StatusOr<CrossMeshPlan>& plan : batch.plans) {
    if (!plan.ok()) continue;
    batch.total_bytes += plan->pre.total_bytes + plan->post.total_bytes;
    AddTransferBytes(plan->transfers, plan->tensor.itemsize(), loads);
  }
  for (const BucketSchedule& pre : batch.pre_schedules) {
    batch.pre_time_us += pre.time_us_after;
  }
  batch.post_time_us = batch.post_schedule.time_us_after;
  for (const CrossBucket& b : batch.buckets) {
    batch.transfer_time_us += b.time_us;
    batch.total_bytes += b.bytes;
  }
  batch.bytes_by_rank = CountBytes(loads);
  batch.total_time_us =
      batch.pre_time_us + batch.transfer_time_us + batch.post_time_us;
}

}  // namespace

absl::StatusOr<CrossBatchPlan> MakeCrossMeshBatch(
    const Mesh& src_mesh, const Mesh& dst_mesh,
    const std::vector<CrossBatchItem>& items, int64_t bucket_bytes,
    PlanCache* cache, const StopCheck& stop) {
  if (bucket_bytes < 1) {
    return absl::InvalidArgumentError("bucket_bytes: must be at least 1 byte");
  }
  const auto start = std::chrono::steady_clock::now();
  CrossBatchPlan batch;
  LinkParams link;
  for (const CrossBatchItem& item : items) {
    const Mesh& src = item.src_mesh != nullptr ? *item.src_mesh : src_mesh;
    batch.plans.push_back(
        item.invalid.ok()
            ? MakeCrossMeshPlan(src, dst_mesh, item.request, cache, stop)
            : absl::StatusOr<CrossMeshPlan>(item.invalid));
    if (batch.plans.back().ok() && !link.bandwidth_gbps.has_value()) {
      link = batch.plans.back()->cross_link;
    }
    if (stop && !stop().ok()) return stop();
  }
  batch.buckets = Buckets(batch, bucket_bytes, link);
  absl::Status s =
      ScheduleSteps(src_mesh, dst_mesh, items, bucket_bytes, batch);
  if (!s.ok()) return s;
  AddTotals(batch);
  batch.planning_us = std::chrono::duration<double, std::micro>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  return batch;
}

}  // namespace reshard
