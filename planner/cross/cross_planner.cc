#include "planner/cross/cross_planner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/cross/cross_cost.h"
#include "planner/cross/layout_digest.h"
#include "planner/cross/mid_candidates.h"
#include "planner/search/planner.h"

namespace reshard {
namespace {

// A src_mid or dst_mid with the steps that reach it or leave it.
struct Side {
  DistState mid;
  Plan steps;
};

// The first error of a side whose candidates all failed to plan.
absl::StatusOr<std::vector<Side>> PlanSide(const Mesh& mesh,
                                           const CrossMeshRequest& r,
                                           const std::vector<DistState>& mids,
                                           bool mid_is_target, PlanCache* cache,
                                           const StopCheck& stop) {
  std::vector<Side> out;
  absl::Status first = absl::OkStatus();
  for (const DistState& mid : mids) {
    PlanRequest req{r.tensor, mid_is_target ? r.src : mid,
                    mid_is_target ? mid : r.dst, r.options, r.cache_scope};
    // The cap is the whole plan's (both roles; Choose applies it): a side
    // of no steps would be refused for the copy through that a plan of
    // one mesh prices and a cross-mesh rank never makes.
    req.options.max_peak_bytes.reset();
    absl::StatusOr<Plan> steps = cache != nullptr
                                     ? MakePlanCached(mesh, req, *cache, stop)
                                     : MakePlan(mesh, req, stop);
    if (steps.ok()) {
      out.push_back({mid, *std::move(steps)});
    } else if (first.ok()) {
      first = steps.status();
    }
  }
  if (out.empty()) return first;
  return out;
}

absl::Status CheckPartialSource(const Mesh& src_mesh,
                                const CrossMeshRequest& r) {
  if (r.unavailable_ranks.empty()) return absl::OkStatus();
  for (int m = 0; m < r.src.mesh_ndim(); ++m) {
    if (r.src.placement(m).is_partial() && src_mesh.size(m) > 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "unavailable_ranks: src[", m, "] is ", r.src.placement(m).ToString(),
          ": its reduction needs every source rank, and unavailable ranks "
          "cannot take part"));
    }
  }
  return absl::OkStatus();
}

// The best pair so far, by time, then bytes; earlier pairs win ties.
struct Choice {
  const Side* pre = nullptr;
  const Side* post = nullptr;
  std::vector<Transfer> transfers;
  double transfer_us = 0;
  double total_us = 0;
  int64_t bytes = 0;
  bool Beats(const Choice& other) const {
    return other.pre == nullptr || total_us < other.total_us ||
           (total_us == other.total_us && bytes < other.bytes);
  }
};

// Both roles' peak for a pair of sides (CrossPeakBytes).
int64_t PeakOf(const Mesh& src_mesh, const Mesh& dst_mesh,
               const CrossMeshRequest& r, const Side& pre, const Side& post) {
  CrossMeshPlan plan{r.tensor, r.src,     r.dst,     pre.mid,
                     post.mid, pre.steps, post.steps};
  return CrossPeakBytes(src_mesh, dst_mesh, plan);
}

absl::Status OverTheCap(int64_t least, int64_t cap) {
  return absl::FailedPreconditionError(absl::StrCat(
      "options.max_peak_bytes: every cross-mesh plan peaks at ", least,
      " bytes per rank or more (a rank's source and destination roles "
      "together), above the cap of ",
      cap, " bytes"));
}

absl::StatusOr<Choice> Choose(const Mesh& src_mesh, const Mesh& dst_mesh,
                              const CrossMeshRequest& r,
                              const std::vector<Side>& pres,
                              const std::vector<Side>& posts,
                              const LinkParams& link) {
  const int64_t itemsize = r.tensor.itemsize();
  const std::optional<int64_t>& cap = r.options.max_peak_bytes;
  Choice best;
  absl::Status first = absl::OkStatus();
  int64_t least_peak = -1;
  for (const Side& pre : pres) {
    for (const Side& post : posts) {
      const int64_t peak = PeakOf(src_mesh, dst_mesh, r, pre, post);
      least_peak = least_peak < 0 ? peak : std::min(least_peak, peak);
      if (cap.has_value() && peak > *cap) continue;
      absl::StatusOr<std::vector<Transfer>> transfers =
          ExpandTransfers({src_mesh, dst_mesh, r.tensor.shape(), pre.mid,
                           post.mid, r.unavailable_ranks});
      if (!transfers.ok()) {
        if (first.ok()) first = transfers.status();
        continue;
      }
      Choice c{&pre, &post, *std::move(transfers)};
      c.transfer_us = TransferTimeUs(c.transfers, itemsize, link);
      c.total_us =
          pre.steps.total_time_us + c.transfer_us + post.steps.total_time_us;
      c.bytes = pre.steps.total_bytes + post.steps.total_bytes +
                CountTransferBytes(c.transfers, itemsize).total;
      if (c.Beats(best)) best = std::move(c);
    }
  }
  if (best.pre == nullptr) {
    return first.ok() ? OverTheCap(least_peak, cap.value_or(0)) : first;
  }
  return best;
}

CrossMeshPlan PlanOf(const Mesh& src_mesh, const Mesh& dst_mesh,
                     const CrossMeshRequest& r, Choice choice,
                     const LinkParams& link) {
  CrossMeshPlan plan{r.tensor,
                     r.src,
                     r.dst,
                     choice.pre->mid,
                     choice.post->mid,
                     choice.pre->steps,
                     choice.post->steps,
                     std::move(choice.transfers),
                     r.unavailable_ranks,
                     link};
  plan.transfer_time_us = choice.transfer_us;
  plan.bytes_by_rank = CountTransferBytes(plan.transfers, r.tensor.itemsize());
  plan.total_time_us = choice.total_us;
  plan.total_bytes = choice.bytes;
  plan.peak_bytes = CrossPeakBytes(src_mesh, dst_mesh, plan);
  plan.layout_digest = LayoutDigest(src_mesh, dst_mesh, r.tensor, r.src, r.dst);
  plan.warnings = plan.pre.warnings;
  plan.warnings.insert(plan.warnings.end(), plan.post.warnings.begin(),
                       plan.post.warnings.end());
  return plan;
}

}  // namespace

absl::StatusOr<CrossMeshPlan> MakeCrossMeshPlan(const Mesh& src_mesh,
                                                const Mesh& dst_mesh,
                                                const CrossMeshRequest& request,
                                                PlanCache* cache,
                                                const StopCheck& stop) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = CheckPartialSource(src_mesh, request);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<Side>> pres =
      PlanSide(src_mesh, request,
               SourceMidCandidates(src_mesh, request.src, request.tensor), true,
               cache, stop);
  if (!pres.ok()) return pres.status();
  absl::StatusOr<std::vector<Side>> posts =
      PlanSide(dst_mesh, request,
               DestinationMidCandidates(dst_mesh, request.dst, request.tensor),
               false, cache, stop);
  if (!posts.ok()) return posts.status();
  const LinkParams link = ResolveCrossLink(src_mesh, dst_mesh, request.tensor,
                                           request.options, request.cross_link);
  absl::StatusOr<Choice> choice =
      Choose(src_mesh, dst_mesh, request, *pres, *posts, link);
  if (!choice.ok()) return choice.status();
  CrossMeshPlan plan =
      PlanOf(src_mesh, dst_mesh, request, *std::move(choice), link);
  plan.planning_us = std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  return plan;
}

}  // namespace reshard
