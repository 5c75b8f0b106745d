// Values a caller sent, as logs and errors repeat them: control characters
// and non-ASCII bytes escaped (so a value never starts a log line of its
// own) and cut at a fixed length (so a large value cannot grow a log or an
// error; docs/DESIGN.md §5, Bounds).
#ifndef RESHARD_COMMON_ECHOED_TEXT_H_
#define RESHARD_COMMON_ECHOED_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace reshard {

// The most bytes of a caller's value that an error repeats.
inline constexpr size_t kMaxEchoedValueBytes = 64;
// The most bytes of an error message a log line or a reply carries.
inline constexpr size_t kMaxErrorMessageBytes = 2048;

// `value` escaped C-style, its first `max_bytes` bytes only, the rest
// replaced by "...(N bytes)".
std::string EscapedText(absl::string_view value, size_t max_bytes);

// `value` as an error repeats it: quoted, escaped, cut at
// kMaxEchoedValueBytes.
std::string EchoedValue(absl::string_view value);

// An error message as a reply carries it: cut at kMaxErrorMessageBytes
// (escaping is left to whoever prints it).
std::string BoundedMessage(absl::string_view message);

}  // namespace reshard

#endif  // RESHARD_COMMON_ECHOED_TEXT_H_
