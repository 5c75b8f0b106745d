// The refit model (docs/DESIGN.md §9): a whole model's weights moved from
// its training layout to its inference layout on disjoint ranks, planned
// as one cross-mesh schedule (planner/cross/cross_batch.h), beside the two
// baselines NCCL M2N publishes, priced under the same alpha-beta model:
//  - direct: every inference rank takes its whole box from the first
//    holder of each source box it meets, all at once;
//  - hierarchical: each piece crosses once (the inference mesh's DP dim
//    sharded), from the first holder, then all_gathers among the DP
//    replicas, bucketed as Reshard buckets its own.
// Prints, per model and link class, the bytes per link class, max and mean
// bytes per rank, modelled times, planning time and the process's peak
// RSS. Every figure is modelled except planning time and RSS (measured).
//
//   build/bench/refit_bench [--model deepseek|llama|all]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/refit_model.h"
#include "planner/batch/bucket_schedule.h"
#include "planner/core/local_layout.h"
#include "planner/core/state_text.h"
#include "planner/cross/cross_batch.h"
#include "planner/cross/cross_cost.h"
#include "planner/cross/cross_request.h"
#include "planner/cross/mid_candidates.h"
#include "planner/search/planner.h"

namespace reshard::bench {
namespace {

// A GPU cluster's two link classes: NVLink within a domain of `domain`
// consecutive ranks, the network between domains (per GPU).
struct LinkClass {
  const char* name;
  double nvlink_gbps, nvlink_us;
  int64_t domain;
  double net_gbps, net_us;
};
// H100-like: 8-GPU hosts, NVLink 4 (450 GB/s a direction), one 400 Gb/s
// NIC per GPU. GB200-like: NVL72 domains (NVLink 5, 900 GB/s), one 800 Gb/s
// NIC per GPU.
constexpr LinkClass kLinkClasses[] = {
    {"H100-like", 450, 2, 8, 50, 5},
    {"GB200-like", 900, 1, 72, 100, 5},
};

// A mesh whose dims take NVLink where every group of the dim lies in one
// domain, else the network.
Mesh ClusterMesh(std::vector<int64_t> shape, std::vector<std::string> names,
                 std::vector<int64_t> ranks, const LinkClass& links) {
  Mesh plain =
      *Mesh::Create({.shape = shape, .dim_names = names, .rank_map = ranks});
  std::vector<LinkParams> dims;
  for (int d = 0; d < plain.ndim(); ++d) {
    bool local = true;
    for (int64_t p = 0; p < plain.world_size() && local; ++p) {
      for (int64_t r : plain.GroupRanks(p, {d})) {
        local = local && r / links.domain == plain.RankAt(p) / links.domain;
      }
    }
    dims.push_back(local ? LinkParams{links.nvlink_gbps, links.nvlink_us}
                         : LinkParams{links.net_gbps, links.net_us});
  }
  return *Mesh::Create({.shape = std::move(shape),
                        .dim_names = std::move(names),
                        .rank_map = std::move(ranks),
                        .links = std::move(dims)});
}

std::vector<int64_t> Ranks(int64_t first, int64_t count) {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < count; ++r) out.push_back(first + r);
  return out;
}

// ---- Layouts: where each weight lives in training, what inference needs.

int StageOf(const ModelWeight& w, int layers, int stages) {
  if (w.layer < 0) return 0;
  if (w.layer >= layers) return stages - 1;
  return w.layer * stages / layers;
}

const char* InferenceState(TpSplit tp) {
  switch (tp) {
    case TpSplit::kColumn:
      return "R,S(0)";
    case TpSplit::kRow:
      return "R,S(1)";
    default:
      return "R,R";
  }
}

struct Refit {
  std::string layout;
  Mesh inference;
  std::vector<CrossBatchItem> items;
};

// The inference mesh: DP16 x TP8 on ranks 128-255.
Mesh Inference(const LinkClass& links) {
  return ClusterMesh({16, 8}, {"dp", "tp"}, Ranks(128, 128), links);
}

CrossBatchItem Item(const ModelWeight& w, std::shared_ptr<const Mesh> src,
                    const char* from, const Mesh& dst, const LinkClass& l) {
  absl::StatusOr<CrossMeshRequest> r = ParseCrossMeshRequest(
      *src, dst, w.shape, "bf16", from, InferenceState(w.tp), {},
      {l.net_gbps, l.net_us}, {});
  CrossBatchItem item{w.name, std::move(src)};
  if (r.ok()) item.request = *std::move(r);
  item.invalid = r.status();
  return item;
}

// DeepSeek-V3 trained EP16 x DP2 x PP4 on ranks 0-127: a stage's non-expert
// weights replicated over its DP2 x EP16 sub-mesh; expert e on EP rank
// e / 16 of its stage, in both DP replicas.
Refit DeepSeekRefit(const ModelWeights& m, const LinkClass& l) {
  Refit refit{"EP16·DP2·PP4 → TP8·DP16", Inference(l), {}};
  std::map<int64_t, std::shared_ptr<const Mesh>> meshes;
  auto mesh = [&](int64_t key, std::vector<int64_t> shape,
                  std::vector<std::string> names, std::vector<int64_t> ranks) {
    auto& slot = meshes[key];
    if (!slot)
      slot = std::make_shared<const Mesh>(ClusterMesh(shape, names, ranks, l));
    return slot;
  };
  for (const ModelWeight& w : m.weights) {
    const int s = StageOf(w, m.layers, 4);
    if (w.expert >= 0) {
      const int64_t ep = w.expert / 16;
      refit.items.push_back(Item(
          w,
          mesh(100 + s * 16 + ep, {2}, {"dp"}, {s * 32 + ep, s * 32 + 16 + ep}),
          "R", refit.inference, l));
    } else {
      refit.items.push_back(
          Item(w, mesh(s, {2, 16}, {"dp", "ep"}, Ranks(s * 32, 32)), "R,R",
               refit.inference, l));
    }
  }
  return refit;
}

// LLaMA-3-70B trained TP8 x DP4 x PP4 on ranks 0-127: a stage's weights
// split by TP as inference splits them, replicated over DP4.
Refit LlamaRefit(const ModelWeights& m, const LinkClass& l) {
  Refit refit{"TP8·DP4·PP4 → TP8·DP16", Inference(l), {}};
  std::vector<std::shared_ptr<const Mesh>> stages;
  for (int s = 0; s < 4; ++s) {
    stages.push_back(std::make_shared<const Mesh>(
        ClusterMesh({4, 8}, {"dp", "tp"}, Ranks(s * 32, 32), l)));
  }
  for (const ModelWeight& w : m.weights) {
    refit.items.push_back(Item(w, stages[StageOf(w, m.layers, 4)],
                               InferenceState(w.tp), refit.inference, l));
  }
  return refit;
}

// ---- The baselines NCCL M2N publishes, priced here.

// Adds, to `loads`, every destination position taking the intersection of
// its box under `dst_mid` from the first holder of each source box.
void AddFirstHolderPieces(const Mesh& src_mesh, const Mesh& dst_mesh,
                          const CrossMeshRequest& r, const DistState& dst_mid,
                          RankLoads& loads) {
  const std::vector<int64_t>& shape = r.tensor.shape();
  std::map<std::vector<int64_t>, std::pair<Box, int64_t>> first;
  for (int64_t p = 0; p < src_mesh.world_size(); ++p) {
    Box b = LocalBox(src_mesh, r.src, shape, p);
    std::vector<int64_t> key = b.offset;
    key.insert(key.end(), b.extent.begin(), b.extent.end());
    first.try_emplace(key, std::make_pair(b, src_mesh.RankAt(p)));
  }
  for (int64_t q = 0; q < dst_mesh.world_size(); ++q) {
    const Box d = LocalBox(dst_mesh, dst_mid, shape, q);
    for (const auto& [key, held] : first) {
      int64_t volume = 1;
      for (size_t k = 0; k < shape.size(); ++k) {
        const int64_t lo = std::max(held.first.offset[k], d.offset[k]);
        const int64_t hi = std::min(held.first.offset[k] + held.first.extent[k],
                                    d.offset[k] + d.extent[k]);
        volume *= std::max<int64_t>(0, hi - lo);
      }
      const int64_t bytes = volume * r.tensor.itemsize();
      if (bytes == 0) continue;
      loads[held.second].send += bytes;
      loads[dst_mesh.RankAt(q)].recv += bytes;
    }
  }
}

struct Baselines {
  double direct_us = 0;
  double hierarchical_us = 0;
};

// 1 GiB staged a rank: a transfer bucket's bound, and a collective
// bucket's (the baselines' gathers are bucketed alike).
constexpr int64_t kBucketBytes = int64_t{1} << 30;

Baselines PriceBaselines(const Refit& refit, const LinkParams& cross) {
  RankLoads direct, once;
  std::vector<Plan> gathers;
  for (const CrossBatchItem& item : refit.items) {
    const CrossMeshRequest& r = item.request;
    AddFirstHolderPieces(*item.src_mesh, refit.inference, r, r.dst, direct);
    const DistState dst_mid =
        r.dst.placement(0).is_replicate()
            ? ShardOnLargestDim(refit.inference, r.dst, 0, r.tensor)
            : r.dst;
    AddFirstHolderPieces(*item.src_mesh, refit.inference, r, dst_mid, once);
    absl::StatusOr<Plan> gather =
        MakePlan(refit.inference, {r.tensor, dst_mid, r.dst, r.options});
    if (gather.ok()) gathers.push_back(*std::move(gather));
  }
  std::vector<const Plan*> plans;
  for (const Plan& p : gathers) plans.push_back(&p);
  absl::StatusOr<BucketSchedule> schedule =
      ScheduleBuckets(refit.inference, plans, {kBucketBytes, {}});
  const double gathers_us = schedule.ok() ? schedule->time_us_after : 0;
  return {PhaseTimeUs(direct, cross), PhaseTimeUs(once, cross) + gathers_us};
}

// ---- The report.

// Bytes of the post-steps on NVLink and on the network (a step is on the
// network where any of its group's dims is).
std::pair<int64_t, int64_t> PostBytes(const Mesh& dst,
                                      const CrossBatchPlan& batch,
                                      const LinkClass& l) {
  int64_t nvlink = 0, net = 0;
  for (const absl::StatusOr<CrossMeshPlan>& plan : batch.plans) {
    if (!plan.ok()) continue;
    for (const Step& s : plan->post.steps) {
      bool on_net = false;
      for (int d : s.group) {
        on_net = on_net || dst.links()[d].bandwidth_gbps == l.net_gbps;
      }
      (on_net ? net : nvlink) += s.bytes;
    }
  }
  return {nvlink, net};
}

int64_t PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

void Report(const ModelWeights& m, const Refit& refit, const LinkClass& l) {
  PlanCache cache(4096);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CrossBatchPlan> batch =
      MakeCrossMeshBatch(*refit.items[0].src_mesh, refit.inference, refit.items,
                         kBucketBytes, &cache);
  const double planning_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!batch.ok()) {
    std::printf("%s: %s\n", m.model.c_str(), batch.status().ToString().c_str());
    return;
  }
  int failed = 0;
  for (const auto& plan : batch->plans) failed += plan.ok() ? 0 : 1;
  const auto [nvlink, net] = PostBytes(refit.inference, *batch, l);
  const Baselines base = PriceBaselines(refit, {l.net_gbps, l.net_us});
  const TransferBytes& b = batch->bytes_by_rank;
  const double gb = 1e9;
  std::printf(
      "| %s %s | %s | %zu tensors (%d failed), %.1f GB | cross %.1f GB; "
      "inference NVLink %.1f GB, network %.1f GB | send max %.2f / mean "
      "%.2f GB, recv max %.2f GB | %.3f s (pre %.3f, transfers %.3f in %zu "
      "buckets, post %.3f) | %.3f s | %.3f s | %.2f s | %lld MiB |\n",
      m.model.c_str(), refit.layout.c_str(), l.name, refit.items.size(), failed,
      m.Parameters() * 2 / gb, b.total / gb, nvlink / gb, net / gb,
      b.max_send / gb, b.mean_send / gb, b.max_recv / gb,
      batch->total_time_us / 1e6, batch->pre_time_us / 1e6,
      batch->transfer_time_us / 1e6, batch->buckets.size(),
      batch->post_time_us / 1e6, base.direct_us / 1e6,
      base.hierarchical_us / 1e6, planning_s,
      static_cast<long long>(PeakRssMiB()));
  std::fflush(stdout);
}

}  // namespace
}  // namespace reshard::bench

int main(int argc, char** argv) {
  using namespace reshard::bench;
  std::string model = "all";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--model") model = argv[i + 1];
  }
  std::printf(
      "| model, layout | link class | weights | bytes by link class | per rank "
      "(cross link) | Reshard (modelled) | direct p2p (modelled) | "
      "hierarchical (modelled) | planning (measured) | peak RSS (measured) "
      "|\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const LinkClass& l : kLinkClasses) {
    if (model == "all" || model == "deepseek") {
      const ModelWeights m = DeepSeekV3();
      Report(m, DeepSeekRefit(m, l), l);
    }
    if (model == "all" || model == "llama") {
      const ModelWeights m = Llama3_70B();
      Report(m, LlamaRefit(m, l), l);
    }
  }
  return 0;
}
