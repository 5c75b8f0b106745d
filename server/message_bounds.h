// Bounds on what a call carries, checked where a request enters and a
// response leaves (docs/DESIGN.md §5, Bounds): every string, bytes and
// repeated field of every request has a maximum, and no response is larger
// than the server's --max_message_bytes. Both services check every call
// with these before anything else reads it.
#ifndef RESHARD_SERVER_MESSAGE_BOUNDS_H_
#define RESHARD_SERVER_MESSAGE_BOUNDS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/message.h"

namespace reshard::server {

// `max_entries` for the fields a batch sizes: the server's
// --max_batch_items.
inline constexpr int64_t kBatchItems = -1;

// The bound of one field of a request message, by its proto name
// ("JoinRequest.host"): a repeated field's most entries, a string's or
// bytes' most bytes (each entry's, when repeated), and whether it must be
// printable ASCII (names, ids and tokens, which logs and stores repeat).
struct FieldBound {
  absl::string_view field;
  int64_t max_entries = 0;  // repeated fields; 0 otherwise
  int64_t max_bytes = 0;    // strings and bytes; 0 otherwise
  bool printable = false;
};

// Every field bound, one per string, bytes or repeated field reachable
// from a request of either service.
absl::Span<const FieldBound> RequestFieldBounds();

// INVALID_ARGUMENT naming the first field of `request` past its bound by
// its path from the request ("agent.host: 16777216 bytes, at most 255"),
// the value never repeated. `batch_items` resolves kBatchItems.
absl::Status CheckRequestBounds(const google::protobuf::Message& request,
                                int64_t batch_items);

// The message sizes a page leaves for its framing: a page of entries fills
// the rest of --max_message_bytes.
inline constexpr int64_t kPageSlackBytes = 4096;

// RESOURCE_EXHAUSTED when `response` serializes to more than `max_bytes`
// (--max_message_bytes), saying how to ask for less, instead of gRPC
// failing to send it (or, past 2 GiB, aborting the server).
absl::Status CheckResponseSize(const google::protobuf::Message& response,
                               int64_t max_bytes);

}  // namespace reshard::server

#endif  // RESHARD_SERVER_MESSAGE_BOUNDS_H_
