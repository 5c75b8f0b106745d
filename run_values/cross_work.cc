#include "run_values/cross_work.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/fnv1a.h"
#include "planner/format/plan_digest.h"

namespace reshard::executor {

std::vector<int64_t> CrossRanks(const Mesh& src_mesh, const Mesh& dst_mesh) {
  std::vector<int64_t> ranks;
  for (const Mesh* mesh : {&src_mesh, &dst_mesh}) {
    for (int64_t p = 0; p < mesh->world_size(); ++p) {
      ranks.push_back(mesh->RankAt(p));
    }
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

absl::StatusOr<Mesh> CrossWork::RanksMesh() const {
  return CrossBatchRanksMesh({this, 1});
}

int64_t CrossWork::SentBytes(int64_t rank) const {
  int64_t n = 0;
  for (const Transfer& t : plan.transfers) {
    if (t.from == rank && t.to != rank) n += t.numel();
  }
  return n * ItemSize(plan.tensor.dtype());
}

int64_t CrossWork::ReceivedBytes(int64_t rank) const {
  int64_t n = 0;
  for (const Transfer& t : plan.transfers) {
    if (t.to == rank && t.from != rank) n += t.numel();
  }
  return n * ItemSize(plan.tensor.dtype());
}

uint64_t CrossWork::Digest() const {
  std::string text =
      absl::StrCat(plan.layout_digest, ";", plan.src_mid.ToString(), ";",
                   plan.dst_mid.ToString(), ";", PlanDigest(src_mesh, plan.pre),
                   ";", PlanDigest(dst_mesh, plan.post), ";");
  for (int64_t r : plan.unavailable_ranks) absl::StrAppend(&text, r, ",");
  return Fnv1a64(text);
}

std::vector<int64_t> CrossBatchRanks(absl::Span<const CrossWork> items) {
  std::vector<int64_t> ranks;
  for (const CrossWork& work : items) {
    const std::vector<int64_t> mine = work.Ranks();
    ranks.insert(ranks.end(), mine.begin(), mine.end());
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

absl::StatusOr<Mesh> CrossBatchRanksMesh(absl::Span<const CrossWork> items) {
  std::vector<int64_t> ranks = CrossBatchRanks(items);
  const auto size = static_cast<int64_t>(ranks.size());
  return Mesh::Create({{size}, {"ranks"}, std::move(ranks)});
}

uint64_t CrossBatchDigest(const std::vector<CrossWork>& items,
                          int64_t exchange_bytes) {
  std::string text = absl::StrCat("batch;", exchange_bytes, ";");
  for (const CrossWork& work : items)
    absl::StrAppend(&text, work.Digest(), ";");
  return Fnv1a64(text);
}

int64_t CrossRunWork::PeakBytes() const {
  int64_t peak = 0;
  for (const CrossWork& item : items) peak += item.plan.peak_bytes;
  return peak;
}

CrossRunWork CrossRunWork::OfPlan(CrossWork work) {
  CrossRunWork run;
  run.digest = work.Digest();
  run.items.push_back(std::move(work));
  return run;
}

CrossRunWork CrossRunWork::OfBatch(std::vector<CrossWork> items,
                                   int64_t exchange_bytes) {
  CrossRunWork run;
  run.digest = CrossBatchDigest(items, exchange_bytes);
  run.items = std::move(items);
  run.exchange_bytes = exchange_bytes;
  run.batch = true;
  return run;
}

namespace {

// Tensor t's row over the reports of every rank (a rank's t-th tensor: a
// destination rank reports one per tensor, a source-only rank none).
TensorRow CrossTensor(const CrossWork& work, size_t t,
                      const std::vector<RankReport>& reports) {
  TensorRow row;
  for (const RankReport& r : reports) {
    const bool destination = work.IsDestination(r.rank);
    const bool known = r.tensors.size() > t;
    row.checksums.push_back(known ? r.tensors[t].checksum : 0);
    if (known && row.conservation.empty()) {
      row.conservation = r.tensors[t].conservation;
      row.conservation_source = r.tensors[t].conservation_source;
      row.conservation_result = r.tensors[t].conservation_result;
    }
    if (!destination || !row.validated) continue;
    if (!known || !r.tensors[t].validated) {
      row.validated = false;
      row.why_not =
          absl::StrCat("rank ", r.rank, ": ",
                       known ? r.tensors[t].validation_error : "no verdict");
    }
  }
  return row;
}

}  // namespace

RunSummary SummarizeCross(const CrossWork& work,
                          std::vector<RankReport> reports) {
  return SummarizeCrossBatch({work}, std::move(reports));
}

RunSummary SummarizeCrossBatch(const std::vector<CrossWork>& items,
                               std::vector<RankReport> reports) {
  std::sort(
      reports.begin(), reports.end(),
      [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
  RunSummary s;
  std::array<int64_t, kCrossRows> bytes = {0, 0, 0};
  for (const CrossWork& work : items) {
    bytes[0] += work.plan.pre.total_bytes;
    bytes[1] += work.plan.bytes_by_rank.total;
    bytes[2] += work.plan.post.total_bytes;
  }
  for (int r = 0; r < kCrossRows; ++r) {
    SummaryRow row;
    row.op = kCrossRowNames[r];
    row.bytes = bytes[r];
    FillRowTimings(r, reports, row);
    s.rows.push_back(std::move(row));
  }
  FillRunTotals(reports, s);
  for (size_t t = 0; t < items.size(); ++t) {
    s.tensors.push_back(CrossTensor(items[t], t, reports));
    if (s.validated && !s.tensors.back().validated) {
      s.validated = false;
      s.why_not =
          items.size() > 1
              ? absl::StrCat("tensors[", t, "]: ", s.tensors.back().why_not)
              : s.tensors.back().why_not;
    }
  }
  return s;
}

}  // namespace reshard::executor
