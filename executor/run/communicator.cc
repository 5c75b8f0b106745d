#include "executor/run/communicator.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/run/box_copy.h"

namespace reshard::executor {

absl::Status Communicator::AllToAllRuns(
    absl::FunctionRef<SendBlock(int)> send,
    absl::FunctionRef<absl::Span<const ByteRun>(int)>, void* scratch, void* out,
    int64_t block_bytes) {
  // Data movement only: every dtype's size is a multiple of two bytes, so
  // the blocks move as 16-bit words.
  constexpr DType kWords = DType::kFloat16;
  const int64_t words = block_bytes / ItemSize(kWords);
  char* wire = static_cast<char*>(scratch);
  // The input's own consecutive blocks (this member's included) go as
  // they are; anything else is gathered into the scratch blocks.
  std::vector<SendBlock> blocks(size());
  const char* start = nullptr;
  bool consecutive = true;
  for (int j = 0; j < size(); ++j) {
    blocks[j] = send(j);
    const SendBlock& b = blocks[j];
    const char* at =
        b.runs.empty() ? nullptr : b.base + b.runs[0].offset - j * block_bytes;
    if (start == nullptr) start = at;
    consecutive = consecutive && b.runs.size() == 1 && at == start;
  }
  if (consecutive && start != nullptr && start != wire) {
    return AllToAll(start, out, words, kWords);
  }
  for (int j = 0; j < size(); ++j) {
    char* block = wire + j * block_bytes;
    for (const ByteRun& run : blocks[j].runs) {
      const char* from = blocks[j].base + run.offset;
      if (from != block) CopyBytes(block, from, run.bytes);
      block += run.bytes;
    }
  }
  return AllToAll(scratch, out, words, kWords);
}

absl::Status Communicator::CheckPeer(absl::string_view what, int peer) const {
  if (peer >= 0 && peer < size() && peer != index()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " member ", peer, " of group ", name(),
                   ": not a peer of member ", index(), " among ", size()));
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

absl::Status Communicator::Exchange(absl::Span<const PeerMessage> sends,
                                    absl::Span<const PeerMessage>) {
  return absl::UnimplementedError(
      absl::StrCat("exchange with ", sends.size(), " peer(s) of group ", name(),
                   ": this backend has no point-to-point calls"));
}

}  // namespace reshard::executor
