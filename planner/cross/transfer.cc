#include "planner/cross/transfer.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {
namespace {

// One distinct non-empty box of the source layout and who holds it.
struct SourceBox {
  Box box;
  std::vector<int64_t> holders;      // available ones, in position order
  std::vector<int64_t> all_holders;  // for the error that names them
};

std::vector<SourceBox> SourceBoxes(const TransferLayout& l) {
  std::vector<SourceBox> boxes;
  absl::flat_hash_map<std::vector<int64_t>, size_t> index;
  for (int64_t p = 0; p < l.src_mesh.world_size(); ++p) {
    Box box = LocalBox(l.src_mesh, l.src_mid, l.shape, p);
    if (box.numel() == 0) continue;
    std::vector<int64_t> key = box.offset;
    key.insert(key.end(), box.extent.begin(), box.extent.end());
    auto [it, inserted] = index.try_emplace(std::move(key), boxes.size());
    if (inserted) boxes.push_back({std::move(box), {}, {}});
    SourceBox& s = boxes[it->second];
    const int64_t rank = l.src_mesh.RankAt(p);
    s.all_holders.push_back(rank);
    if (!std::binary_search(l.unavailable_ranks.begin(),
                            l.unavailable_ranks.end(), rank)) {
      s.holders.push_back(rank);
    }
  }
  return boxes;
}

std::vector<Box> DestinationBoxes(const TransferLayout& l) {
  std::vector<Box> boxes;
  boxes.reserve(l.dst_mesh.world_size());
  for (int64_t q = 0; q < l.dst_mesh.world_size(); ++q) {
    boxes.push_back(LocalBox(l.dst_mesh, l.dst_mid, l.shape, q));
  }
  return boxes;
}

std::optional<Box> Intersection(const Box& a, const Box& b) {
  Box out;
  for (size_t d = 0; d < a.offset.size(); ++d) {
    const int64_t lo = std::max(a.offset[d], b.offset[d]);
    const int64_t hi =
        std::min(a.offset[d] + a.extent[d], b.offset[d] + b.extent[d]);
    if (hi <= lo) return std::nullopt;
    out.offset.push_back(lo);
    out.extent.push_back(hi - lo);
  }
  return out;
}

absl::Status HeldOnlyByUnavailable(const SourceBox& s) {
  return absl::FailedPreconditionError(absl::StrCat(
      "unavailable_ranks: the source box at offset [",
      absl::StrJoin(s.box.offset, ","), "] extent [",
      absl::StrJoin(s.box.extent, ","), "] is held only by unavailable ranks ",
      absl::StrJoin(s.all_holders, ", ")));
}

// The rule applied to one source box: its pieces, to every destination
// position in row-major order, appended to `out`.
absl::Status ReplayBox(const TransferLayout& l, const SourceBox& s,
                       const std::vector<Box>& dst_boxes,
                       std::vector<Transfer>& out) {
  std::vector<int64_t> load(s.holders.size(), 0);
  for (size_t q = 0; q < dst_boxes.size(); ++q) {
    if (dst_boxes[q].numel() == 0) continue;
    std::optional<Box> piece = Intersection(s.box, dst_boxes[q]);
    if (!piece.has_value()) continue;
    if (s.holders.empty()) return HeldOnlyByUnavailable(s);
    const int64_t to = l.dst_mesh.RankAt(static_cast<int64_t>(q));
    int64_t from = to;
    if (std::find(s.holders.begin(), s.holders.end(), to) == s.holders.end()) {
      const size_t least = static_cast<size_t>(
          std::min_element(load.begin(), load.end()) - load.begin());
      load[least] += piece->numel();
      from = s.holders[least];
    }
    out.push_back(
        {from, to, std::move(piece->offset), std::move(piece->extent)});
  }
  return absl::OkStatus();
}

bool Meets(const Box& a, const Box& b) {
  return b.numel() > 0 && Intersection(a, b).has_value();
}

}  // namespace

absl::StatusOr<std::vector<Transfer>> ExpandTransfers(
    const TransferLayout& layout) {
  // Counted before any box is: the source's distinct boxes are at most
  // its shards.
  const int64_t pairs =
      layout.src_mid.NumShards(layout.src_mesh) * layout.dst_mesh.world_size();
  if (pairs > kMaxBoxPairs) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the cross-mesh plan would check ", pairs,
        " pairs of destination and source boxes, over the bound of ",
        kMaxBoxPairs));
  }
  const std::vector<Box> dst_boxes = DestinationBoxes(layout);
  std::vector<Transfer> out;
  for (const SourceBox& s : SourceBoxes(layout)) {
    absl::Status status = ReplayBox(layout, s, dst_boxes, out);
    if (!status.ok()) return status;
  }
  return out;
}

absl::StatusOr<std::vector<Transfer>> TransfersOfRank(
    const TransferLayout& layout, int64_t rank) {
  const std::vector<Box> dst_boxes = DestinationBoxes(layout);
  const int64_t q = layout.dst_mesh.PositionOfRank(rank);
  std::vector<Transfer> out;
  for (const SourceBox& s : SourceBoxes(layout)) {
    const bool holds =
        std::find(s.holders.begin(), s.holders.end(), rank) != s.holders.end();
    if (!holds && (q < 0 || !Meets(s.box, dst_boxes[q]))) continue;
    std::vector<Transfer> all;
    absl::Status status = ReplayBox(layout, s, dst_boxes, all);
    if (!status.ok()) return status;
    for (Transfer& t : all) {
      if (t.from == rank || t.to == rank) out.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace reshard
