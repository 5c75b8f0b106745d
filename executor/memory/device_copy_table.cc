#include "executor/memory/device_copy_table.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace reshard::executor {
namespace {

int64_t Runs(const StridedCopy& copy) {
  int64_t runs = 1;
  for (int64_t count : copy.counts) runs *= count;
  return runs;
}

std::string BufferName(CopyBuffer b) {
  switch (b) {
    case CopyBuffer::kIn:
      return "in";
    case CopyBuffer::kOut:
      return "out";
    case CopyBuffer::kWireIn:
      return "wire_in";
    default:
      return "wire_out";
  }
}

// Every unit's and pitched row's destination range [begin, end), by
// buffer.
using Written = std::map<CopyBuffer, std::vector<std::pair<int64_t, int64_t>>>;

Written WrittenRanges(const DeviceCopyTable& table) {
  Written written;
  for (int64_t u = 0; u < table.units; ++u) {
    const UnitCopy c =
        LocateUnit(table.ops.data(), static_cast<int32_t>(table.ops.size()),
                   table.dims.data(), u);
    written[c.to].push_back({c.to_at, c.to_at + c.bytes});
  }
  for (const PitchedCopy& p : table.pitched) {
    ForEachPitchedRow(p, [&](int64_t, int64_t to_at) {
      written[p.to].push_back({to_at, to_at + p.width});
    });
  }
  return written;
}

// Every copy's source and destination buffer.
std::vector<std::pair<CopyBuffer, CopyBuffer>> Ends(
    const DeviceCopyTable& table) {
  std::vector<std::pair<CopyBuffer, CopyBuffer>> ends;
  for (const DeviceCopyOp& op : table.ops) ends.push_back({op.from, op.to});
  for (const PitchedCopy& p : table.pitched) ends.push_back({p.from, p.to});
  return ends;
}

}  // namespace

DeviceCopyTable EncodeForDevice(const CopyProgram& program,
                                const PitchedPolicy& policy) {
  DeviceCopyTable table;
  table.fills = program.fills;
  for (const StridedCopy& copy : program.copies) {
    const int64_t runs = Runs(copy);
    if (copy.run_bytes <= 0 || runs <= 0) continue;
    if (std::optional<PitchedCopy> p = AsPitched(copy);
        p.has_value() && WorthPitched(*p, policy)) {
      table.pitched.push_back(*p);
      continue;
    }
    DeviceCopyOp op;
    op.from = copy.from;
    op.to = copy.to;
    op.loops = static_cast<int32_t>(copy.counts.size());
    op.dims_at = static_cast<int32_t>(table.dims.size());
    op.from_offset = copy.from_offset;
    op.to_offset = copy.to_offset;
    op.run_bytes = copy.run_bytes;
    op.chunks_per_run =
        (copy.run_bytes + kDeviceChunkBytes - 1) / kDeviceChunkBytes;
    op.first_unit = table.units;
    for (const std::vector<int64_t>* part :
         {&copy.counts, &copy.from_strides, &copy.to_strides}) {
      table.dims.insert(table.dims.end(), part->begin(), part->end());
    }
    table.units += runs * op.chunks_per_run;
    table.max_unit_bytes = std::max(
        table.max_unit_bytes, std::min(copy.run_bytes, kDeviceChunkBytes));
    table.ops.push_back(op);
  }
  return table;
}

absl::Status CheckParallel(const DeviceCopyTable& table) {
  const std::vector<std::pair<CopyBuffer, CopyBuffer>> ends = Ends(table);
  for (const auto& reader : ends) {
    for (const auto& writer : ends) {
      if (reader.first == writer.second) {
        return absl::FailedPreconditionError(
            absl::StrCat("a copy reads ", BufferName(reader.first),
                         ", which a copy of the same program writes"));
      }
    }
  }
  for (auto& [buffer, ranges] : WrittenRanges(table)) {
    std::sort(ranges.begin(), ranges.end());
    for (size_t k = 1; k < ranges.size(); ++k) {
      if (ranges[k].first < ranges[k - 1].second) {
        return absl::FailedPreconditionError(
            absl::StrCat("bytes [", ranges[k].first, ", ", ranges[k - 1].second,
                         ") of ", BufferName(buffer), " are written twice"));
      }
    }
  }
  return absl::OkStatus();
}

void RunTableOnHost(const DeviceCopyTable& table, const CopyBuffers& buffers) {
  for (const ZeroFill& fill : table.fills) {
    if (fill.bytes > 0) {
      std::memset(WritableBuffer(fill.buffer, buffers) + fill.offset, 0,
                  static_cast<size_t>(fill.bytes));
    }
  }
  for (int64_t u = 0; u < table.units; ++u) {
    const UnitCopy c =
        LocateUnit(table.ops.data(), static_cast<int32_t>(table.ops.size()),
                   table.dims.data(), u);
    std::memcpy(WritableBuffer(c.to, buffers) + c.to_at,
                ReadableBuffer(c.from, buffers) + c.from_at,
                static_cast<size_t>(c.bytes));
  }
  for (const PitchedCopy& p : table.pitched) RunPitchedOnHost(p, buffers);
}

}  // namespace reshard::executor
