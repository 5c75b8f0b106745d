#include "executor/run/communicator.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/run/box_copy.h"

namespace reshard::executor {

absl::Status Communicator::AllToAllPacking(
    absl::FunctionRef<const void*(int)> pack, void* scratch, void* out,
    int64_t block_numel, DType dtype) {
  const int64_t bytes = block_numel * ItemSize(dtype);
  std::vector<const char*> blocks(size());
  bool consecutive = true;
  for (int j = 0; j < size(); ++j) {
    blocks[j] = static_cast<const char*>(pack(j));
    consecutive = consecutive && blocks[j] == blocks[0] + j * bytes;
  }
  if (consecutive) return AllToAll(blocks[0], out, block_numel, dtype);
  char* base = static_cast<char*>(scratch);
  for (int j = 0; j < size(); ++j) {
    if (blocks[j] != base + j * bytes) {
      CopyBytes(base + j * bytes, blocks[j], bytes);
    }
  }
  return AllToAll(scratch, out, block_numel, dtype);
}

absl::Status Communicator::Send(int peer, const void*, int64_t) {
  return absl::UnimplementedError(
      absl::StrCat("send to member ", peer, " of group ", name(),
                   ": this backend has no point-to-point calls"));
}

absl::Status Communicator::Recv(int peer, void*, int64_t) {
  return absl::UnimplementedError(
      absl::StrCat("receive from member ", peer, " of group ", name(),
                   ": this backend has no point-to-point calls"));
}

}  // namespace reshard::executor
