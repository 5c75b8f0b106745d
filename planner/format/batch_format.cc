#include "planner/format/batch_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "planner/format/plan_format.h"

namespace reshard {
namespace {

std::string MemberJson(const BucketMember& m) {
  return absl::StrCat("{\"tensor\":", m.tensor, ",\"step\":", m.step, "}");
}

std::string ItemName(const std::vector<std::string>& names, size_t i) {
  return i < names.size() && !names[i].empty() ? names[i]
                                               : absl::StrCat("items[", i, "]");
}

std::string ItemLine(const Mesh& mesh, const std::string& name,
                     const absl::StatusOr<Plan>& plan) {
  if (!plan.ok()) {
    return absl::StrFormat("%-20s error %s: %s\n", name,
                           absl::StatusCodeToString(plan.status().code()),
                           plan.status().message());
  }
  return absl::StrFormat(
      "%-20s %-14s %-9s %-36s %5d %12.4f\n", name,
      absl::StrJoin(plan->tensor.shape(), ","), DTypeName(plan->tensor.dtype()),
      absl::StrCat(plan->src.ToString(), " -> ", plan->dst.ToString()),
      plan->CommunicatingSteps(mesh), plan->total_time_us);
}

std::string BucketLine(const Mesh& mesh, size_t index, const Bucket& b) {
  return absl::StrFormat("%6d  %-15s %-8s %-6s %7d %12d %12.4f\n", index,
                         StepOpName(b.op), mesh.GroupName(b.group),
                         b.Reduces() ? ReduceOpName(b.reduce_op) : "-",
                         b.members.size(), b.bytes, b.time_us);
}

std::string Totals(const BucketSchedule& s) {
  const double speedup =
      s.time_us_after > 0 ? s.time_us_before / s.time_us_after : 1.0;
  return absl::StrFormat(
      "collectives: %d tensor by tensor, %d bucketed\n"
      "model time: %.4f us tensor by tensor, %.4f us bucketed (%.2fx)\n"
      "peak bytes per rank, bucketed: %d\n",
      s.collectives_before, s.collectives_after, s.time_us_before,
      s.time_us_after, speedup, s.peak_bytes);
}

}  // namespace

std::string StatusJson(const absl::Status& status) {
  return absl::StrCat(
      "{\"code\":", JsonString(absl::StatusCodeToString(status.code())),
      ",\"message\":", JsonString(status.message()), "}");
}

std::string BucketJson(const Mesh& mesh, const Bucket& b) {
  std::vector<std::string> members;
  members.reserve(b.members.size());
  for (const BucketMember& m : b.members) members.push_back(MemberJson(m));
  return absl::StrCat(
      "{\"op\":", JsonString(StepOpName(b.op)),
      ",\"group\":", JsonString(mesh.GroupName(b.group)), ",\"reduce_op\":",
      b.Reduces() ? JsonString(ReduceOpName(b.reduce_op)) : "null",
      ",\"avg_divisor\":", b.avg_divisor, ",\"bytes\":", b.bytes,
      ",\"members\":[", absl::StrJoin(members, ","), "]}");
}

std::string BatchJson(const Mesh& mesh, const BatchPlan& batch) {
  std::vector<std::string> plans;
  plans.reserve(batch.plans.size());
  for (const absl::StatusOr<Plan>& p : batch.plans) {
    plans.push_back(
        p.ok() ? PlanJson(mesh, *p)
               : absl::StrCat("{\"error\":", StatusJson(p.status()), "}"));
  }
  std::vector<std::string> buckets;
  buckets.reserve(batch.schedule.buckets.size());
  for (const Bucket& b : batch.schedule.buckets) {
    buckets.push_back(BucketJson(mesh, b));
  }
  const BucketSchedule& s = batch.schedule;
  return absl::StrCat("{\"plans\":[", absl::StrJoin(plans, ","),
                      "],\"buckets\":[", absl::StrJoin(buckets, ","),
                      "],\"collectives_before\":", s.collectives_before,
                      ",\"collectives_after\":", s.collectives_after,
                      ",\"time_us_before\":", FormatDouble(s.time_us_before),
                      ",\"time_us_after\":", FormatDouble(s.time_us_after),
                      ",\"peak_bytes\":", s.peak_bytes, "}");
}

std::string BatchTable(const Mesh& mesh, const BatchPlan& batch,
                       const std::vector<std::string>& names) {
  std::string out = absl::StrFormat(
      "items: %d (%d planned, %d errors)\n", batch.plans.size(),
      batch.plans.size() - batch.ItemErrors(), batch.ItemErrors());
  absl::StrAppend(&out, absl::StrFormat("%-20s %-14s %-9s %-36s %5s %12s\n",
                                        "item", "shape", "dtype", "src -> dst",
                                        "colls", "model_us"));
  for (size_t i = 0; i < batch.plans.size(); ++i) {
    absl::StrAppend(&out, ItemLine(mesh, ItemName(names, i), batch.plans[i]));
  }
  absl::StrAppend(&out, absl::StrFormat("%6s  %-15s %-8s %-6s %7s %12s %12s\n",
                                        "bucket", "op", "group", "reduce",
                                        "members", "bytes", "model_us"));
  for (size_t b = 0; b < batch.schedule.buckets.size(); ++b) {
    absl::StrAppend(&out, BucketLine(mesh, b, batch.schedule.buckets[b]));
  }
  return out + Totals(batch.schedule);
}

}  // namespace reshard
