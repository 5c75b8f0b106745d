#include "planner/format/cross_plan_format.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"
#include "planner/cross/layout_digest.h"
#include "planner/cross/transfer.h"
#include "planner/format/batch_format.h"
#include "planner/format/plan_format.h"

namespace reshard {
namespace {

// Rank pairs shown in the table; the rest are counted.
constexpr size_t kShownPairs = 16;

std::string StepsJson(const Mesh& mesh, const Plan& plan) {
  std::vector<std::string> steps;
  for (const Step& s : plan.steps) steps.push_back(StepJson(mesh, s));
  return absl::StrCat("[", absl::StrJoin(steps, ","), "]");
}

std::string TransfersJson(const CrossMeshPlan& plan, int64_t max_listed) {
  const int64_t count = static_cast<int64_t>(plan.transfers.size());
  if (count > max_listed) {
    return absl::StrCat("\"transfers\":[],\"transfers_omitted\":", count);
  }
  std::vector<std::string> items;
  items.reserve(plan.transfers.size());
  for (const Transfer& t : plan.transfers) {
    items.push_back(absl::StrCat("{\"from\":", t.from, ",\"to\":", t.to,
                                 ",\"offset\":[", absl::StrJoin(t.offset, ","),
                                 "],\"extent\":[", absl::StrJoin(t.extent, ","),
                                 "]}"));
  }
  return absl::StrCat("\"transfers\":[", absl::StrJoin(items, ","), "]");
}

std::string SenderRuleJson(const CrossMeshPlan& plan) {
  return absl::StrCat(
      "{\"name\":", JsonString(kSenderRuleName), ",\"unavailable_ranks\":[",
      absl::StrJoin(plan.unavailable_ranks, ","),
      "],\"cross_link\":{\"bandwidth_gbps\":",
      FormatDouble(*plan.cross_link.bandwidth_gbps),
      ",\"latency_us\":", FormatDouble(*plan.cross_link.latency_us), "}}");
}

std::string MeshText(const Mesh& mesh) {
  std::vector<std::string> dims;
  for (int d = 0; d < mesh.ndim(); ++d) {
    dims.push_back(absl::StrCat(mesh.dim_names()[d], "=", mesh.size(d)));
  }
  std::vector<int64_t> ranks;
  for (int64_t p = 0; p < mesh.world_size(); ++p)
    ranks.push_back(mesh.RankAt(p));
  return absl::StrCat(absl::StrJoin(dims, ","), " (ranks ",
                      absl::StrJoin(ranks, ","), ")");
}

// "  0 -> 4: 2048 bytes in 2 boxes" per rank pair (copies to itself
// marked), the first kShownPairs of them.
std::string PairLines(const CrossMeshPlan& plan) {
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int>> pairs;
  for (const Transfer& t : plan.transfers) {
    auto& [bytes, boxes] = pairs[{t.from, t.to}];
    bytes += t.numel() * plan.tensor.itemsize();
    ++boxes;
  }
  std::string out;
  size_t shown = 0;
  for (const auto& [pair, sum] : pairs) {
    if (shown++ == kShownPairs) {
      absl::StrAppend(&out, "  ... ", pairs.size() - kShownPairs,
                      " more rank pairs\n");
      break;
    }
    absl::StrAppend(&out, "  ", pair.first, " -> ", pair.second, ": ",
                    sum.first, " bytes in ", sum.second, " boxes",
                    pair.first == pair.second ? " (local copy)" : "", "\n");
  }
  return out;
}

std::string BytesByRankJson(const TransferBytes& b) {
  return absl::StrCat("{\"max_send\":", b.max_send,
                      ",\"mean_send\":", FormatDouble(b.mean_send),
                      ",\"max_recv\":", b.max_recv, "}");
}

std::string BucketJson(const CrossBucket& b) {
  std::vector<std::string> members;
  members.reserve(b.members.size());
  for (const auto& [item, transfer] : b.members) {
    members.push_back(absl::StrCat("[", item, ",", transfer, "]"));
  }
  return absl::StrCat(
      "{\"members\":[", absl::StrJoin(members, ","), "],\"bytes\":", b.bytes,
      ",\"max_rank_bytes\":", b.max_rank_bytes, ",\"messages\":", b.messages,
      ",\"time_us\":", FormatDouble(b.time_us), "}");
}

int64_t PreCollectives(const CrossBatchPlan& batch) {
  int64_t n = 0;
  for (const BucketSchedule& pre : batch.pre_schedules) {
    n += pre.collectives_after;
  }
  return n;
}

}  // namespace

std::string CrossPlanJson(const Mesh& src_mesh, const Mesh& dst_mesh,
                          const CrossMeshPlan& plan, int64_t max_listed) {
  std::vector<std::string> warnings;
  for (const Warning& w : plan.warnings) warnings.push_back(WarningJson(w));
  const TransferBytes& b = plan.bytes_by_rank;
  return absl::StrCat(
      "{\"kind\":\"cross_mesh\",\"src_mesh\":", MeshJson(src_mesh, true),
      ",\"dst_mesh\":", MeshJson(dst_mesh, true), ",\"tensor\":{\"shape\":[",
      absl::StrJoin(plan.tensor.shape(), ","),
      "],\"dtype\":", JsonString(DTypeName(plan.tensor.dtype())),
      "},\"src\":", JsonString(plan.src.ToString()),
      ",\"dst\":", JsonString(plan.dst.ToString()),
      ",\"src_mid\":", JsonString(plan.src_mid.ToString()),
      ",\"dst_mid\":", JsonString(plan.dst_mid.ToString()),
      ",\"planner\":", JsonString(PlannerName(plan.pre.planner)),
      ",\"cost_model\":", JsonString(CostModelName(plan.pre.cost_model)),
      ",\"pre_steps\":", StepsJson(src_mesh, plan.pre), ",",
      TransfersJson(plan, max_listed),
      ",\"post_steps\":", StepsJson(dst_mesh, plan.post),
      ",\"transfer_time_us\":", FormatDouble(plan.transfer_time_us),
      ",\"total_time_us\":", FormatDouble(plan.total_time_us),
      ",\"total_bytes\":", plan.total_bytes,
      ",\"peak_bytes\":", plan.peak_bytes,
      ",\"bytes_by_rank\":{\"max_send\":", b.max_send,
      ",\"mean_send\":", FormatDouble(b.mean_send),
      ",\"max_recv\":", b.max_recv, "},\"sender_rule\":", SenderRuleJson(plan),
      ",\"layout_digest\":", JsonString(DigestHex(plan.layout_digest)),
      ",\"warnings\":[", absl::StrJoin(warnings, ","),
      "],\"planning_us\":", FormatDouble(plan.planning_us), "}");
}

std::string CrossPlanTable(const Mesh& src_mesh, const Mesh& dst_mesh,
                           const CrossMeshPlan& plan) {
  const TransferBytes& b = plan.bytes_by_rank;
  return absl::StrCat(
      "source: ", plan.src.ToString(), " on ", MeshText(src_mesh), "\n",
      "destination: ", plan.dst.ToString(), " on ", MeshText(dst_mesh), "\n",
      "pre-steps on the source mesh, ", plan.src.ToString(), " -> ",
      plan.src_mid.ToString(), ":\n", PlanTable(src_mesh, plan.pre),
      "transfers, ", plan.src_mid.ToString(), " -> ", plan.dst_mid.ToString(),
      ": ", plan.transfers.size(), " boxes, ", b.total,
      absl::StrFormat(" bytes, %.4f us; per rank: max send %d, mean send "
                      "%.1f, max recv %d bytes\n",
                      plan.transfer_time_us, b.max_send, b.mean_send,
                      b.max_recv),
      PairLines(plan), "post-steps on the destination mesh, ",
      plan.dst_mid.ToString(), " -> ", plan.dst.ToString(), ":\n",
      PlanTable(dst_mesh, plan.post),
      absl::StrFormat("cross-mesh total: %.4f us, %d bytes, peak %d "
                      "bytes/rank, layout digest %s\n",
                      plan.total_time_us, plan.total_bytes, plan.peak_bytes,
                      DigestHex(plan.layout_digest)));
}

std::string CrossBatchJson(const Mesh& src_mesh, const Mesh& dst_mesh,
                           const std::vector<CrossBatchItem>& items,
                           const CrossBatchPlan& batch, int64_t max_listed) {
  std::vector<std::string> entries;
  for (size_t i = 0; i < items.size(); ++i) {
    const Mesh& src = items[i].src_mesh ? *items[i].src_mesh : src_mesh;
    const absl::StatusOr<CrossMeshPlan>& plan = batch.plans[i];
    entries.push_back(absl::StrCat(
        "{\"name\":", JsonString(items[i].name),
        plan.ok() ? absl::StrCat(",\"plan\":", CrossPlanJson(src, dst_mesh,
                                                             *plan, max_listed))
                  : absl::StrCat(",\"error\":", StatusJson(plan.status())),
        "}"));
  }
  std::vector<std::string> buckets;
  for (const CrossBucket& b : batch.buckets) buckets.push_back(BucketJson(b));
  return absl::StrCat(
      "{\"kind\":\"cross_mesh_batch\",\"items\":[", absl::StrJoin(entries, ","),
      "],\"buckets\":[", absl::StrJoin(buckets, ","),
      "],\"pre_collectives\":", PreCollectives(batch),
      ",\"post_collectives\":", batch.post_schedule.collectives_after,
      ",\"pre_time_us\":", FormatDouble(batch.pre_time_us),
      ",\"transfer_time_us\":", FormatDouble(batch.transfer_time_us),
      ",\"post_time_us\":", FormatDouble(batch.post_time_us),
      ",\"total_time_us\":", FormatDouble(batch.total_time_us),
      ",\"total_bytes\":", batch.total_bytes,
      ",\"bytes_by_rank\":", BytesByRankJson(batch.bytes_by_rank),
      ",\"planning_us\":", FormatDouble(batch.planning_us), "}");
}

std::string CrossBatchTable(const std::vector<CrossBatchItem>& items,
                            const CrossBatchPlan& batch) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    const absl::StatusOr<CrossMeshPlan>& plan = batch.plans[i];
    absl::StrAppend(
        &out, items[i].name, ": ",
        plan.ok()
            ? absl::StrFormat("%s -> %s -> %s -> %s, %d transfers, "
                              "%.4f us",
                              plan->src.ToString(), plan->src_mid.ToString(),
                              plan->dst_mid.ToString(), plan->dst.ToString(),
                              plan->transfers.size(), plan->total_time_us)
            : absl::StrCat("error ", plan.status().ToString()),
        "\n");
  }
  for (size_t k = 0; k < batch.buckets.size(); ++k) {
    const CrossBucket& b = batch.buckets[k];
    absl::StrAppend(
        &out, absl::StrFormat("bucket %d: %d transfers in %d messages, %d "
                              "bytes, at most %d per rank, %.4f us\n",
                              k, b.members.size(), b.messages, b.bytes,
                              b.max_rank_bytes, b.time_us));
  }
  const TransferBytes& r = batch.bytes_by_rank;
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "schedule: %.4f us (pre %.4f in %d collectives, transfers %.4f, "
          "post %.4f in %d collectives), %d bytes; per rank: max send %d, "
          "mean send %.1f, max recv %d bytes\n",
          batch.total_time_us, batch.pre_time_us, PreCollectives(batch),
          batch.transfer_time_us, batch.post_time_us,
          batch.post_schedule.collectives_after, batch.total_bytes, r.max_send,
          r.mean_send, r.max_recv));
  return out;
}

}  // namespace reshard
