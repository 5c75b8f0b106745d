// torch.chunk arithmetic: how one tensor dim of extent L splits over n parts.
//
// Part r covers [r*full, min(L, (r+1)*full)) with full = ceil(L/n), so the
// leading parts are full, at most one is partial and trailing parts may be
// empty (13/4 -> 4,4,4,1; 5/4 -> 2,2,1,0; 4/6 -> 1,1,1,1,0,0). Every function
// requires L >= 0, n >= 1 and 0 <= r < n.
#ifndef RESHARD_PLANNER_CORE_CHUNKING_H_
#define RESHARD_PLANNER_CORE_CHUNKING_H_

#include <algorithm>
#include <cstdint>

namespace reshard {

// The extent of the largest part, ceil(L/n): the padded block size of a
// collective over n members.
inline int64_t ChunkFull(int64_t extent, int64_t parts) {
  return (extent + parts - 1) / parts;
}

// The offset of part `index`, clamped to the extent for empty parts.
inline int64_t ChunkOffset(int64_t extent, int64_t parts, int64_t index) {
  return std::min(extent, index * ChunkFull(extent, parts));
}

// The extent of part `index`.
inline int64_t ChunkSize(int64_t extent, int64_t parts, int64_t index) {
  const int64_t full = ChunkFull(extent, parts);
  return std::max<int64_t>(0,
                           std::min(extent, (index + 1) * full) - index * full);
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_CHUNKING_H_
