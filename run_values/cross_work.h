// A cross-mesh run's work (docs/DESIGN.md §9): the plan and its two meshes,
// what every rank of the run (the union of both rank maps) must agree on,
// and the summary of their reports. The Coordinator, the agents and
// reshardctl mean one thing by a cross-mesh run.
#ifndef RESHARD_RUN_VALUES_CROSS_WORK_H_
#define RESHARD_RUN_VALUES_CROSS_WORK_H_

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "planner/core/mesh.h"
#include "planner/cross/cross_plan.h"
#include "run_values/rank_report.h"
#include "run_values/run_summary.h"

namespace reshard::executor {

// The rows of a cross-mesh run's report (RankReport's per-row seconds).
inline constexpr int kCrossRows = 3;
inline constexpr std::array<const char*, kCrossRows> kCrossRowNames = {
    "pre_steps", "transfers", "post_steps"};
inline constexpr int kTransfersRow = 1;

// Every rank of either mesh, ascending: the run's ranks.
std::vector<int64_t> CrossRanks(const Mesh& src_mesh, const Mesh& dst_mesh);

struct CrossWork {
  Mesh src_mesh;
  Mesh dst_mesh;
  CrossMeshPlan plan;

  std::vector<int64_t> Ranks() const { return CrossRanks(src_mesh, dst_mesh); }
  // The run's world, one dim "ranks" over Ranks(): the mesh of its
  // RunWork and of its pre-flight step.
  absl::StatusOr<Mesh> RanksMesh() const;
  bool IsDestination(int64_t rank) const {
    return dst_mesh.PositionOfRank(rank) >= 0;
  }
  // Bytes `rank` sends to other ranks, and receives from them, per run.
  int64_t SentBytes(int64_t rank) const;
  int64_t ReceivedBytes(int64_t rank) const;
  // FNV-1a of the layout digest, both mid states, the pre- and post-steps'
  // PlanDigests and the unavailable ranks: what decides what every rank
  // does (its transfers follow from them by the sender rule).
  uint64_t Digest() const;
};

// Every rank of any tensor's two meshes, ascending: a batch's run's ranks.
std::vector<int64_t> CrossBatchRanks(absl::Span<const CrossWork> items);
// The run's world of a batch, one dim "ranks" over CrossBatchRanks().
absl::StatusOr<Mesh> CrossBatchRanksMesh(absl::Span<const CrossWork> items);

// A cross-mesh batch's digest (what every rank of its run agrees on):
// FNV-1a of every tensor's Digest() in order and the exchange bound.
uint64_t CrossBatchDigest(const std::vector<CrossWork>& items,
                          int64_t exchange_bytes);

// A cross-mesh run's tensors as its ranks run them: one plan (no exchange
// bound) or a batch on one destination mesh, and the digest its ranks
// agree on (CrossWork::Digest for one plan made by OfPlan, else
// CrossBatchDigest).
struct CrossRunWork {
  std::vector<CrossWork> items;
  int64_t exchange_bytes = std::numeric_limits<int64_t>::max();
  uint64_t digest = 0;
  bool batch = false;  // made by OfBatch (a batch of one included)

  // The sum of the tensors' peaks on a rank (CrossMeshPlan::peak_bytes).
  int64_t PeakBytes() const;

  static CrossRunWork OfPlan(CrossWork work);
  static CrossRunWork OfBatch(std::vector<CrossWork> items,
                              int64_t exchange_bytes);
};

// Aggregates the reports of every rank of a run of `work`: the three rows
// (bytes: the pre-steps', the transfers' between different ranks, the
// post-steps'), one tensor whose checksums are by rank of Ranks() (0 on a
// source-only rank, which has no result) and whose verdict is the
// destination ranks' (on registered tensors: the conservation label and
// checksums every destination rank computed alike). Meant for runs where
// every rank ran.
RunSummary SummarizeCross(const CrossWork& work,
                          std::vector<RankReport> reports);

// A batch's SummarizeCross (its tensors share the destination mesh): the
// rows' bytes summed over the tensors, one tensor row per tensor (by the
// reports' tensors in order), validated when every tensor is; why_not
// names the first that is not ("tensors[t]: rank 3: ...").
RunSummary SummarizeCrossBatch(const std::vector<CrossWork>& items,
                               std::vector<RankReport> reports);

}  // namespace reshard::executor

#endif  // RESHARD_RUN_VALUES_CROSS_WORK_H_
