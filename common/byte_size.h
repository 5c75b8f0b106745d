// Byte counts as every Reshard flag takes them: digits with an optional
// binary unit, "65536", "64KiB", "1MiB", "2GiB", "1TiB".
#ifndef RESHARD_COMMON_BYTE_SIZE_H_
#define RESHARD_COMMON_BYTE_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

// What ParseByteSize accepts, for messages and usage texts.
inline constexpr absl::string_view kByteSizeForm =
    "a byte count >= 0 (with an optional KiB, MiB, GiB or TiB)";

// The count `text` names; INVALID_ARGUMENT quoting `text` and kByteSizeForm
// for anything else, negative or past int64 included. Callers prefix the
// flag's name.
absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// `bytes` as ParseByteSize reads it back, in the largest unit that holds
// it whole: "16MiB", "1GiB", "1000".
std::string FormatByteSize(int64_t bytes);

}  // namespace reshard

#endif  // RESHARD_COMMON_BYTE_SIZE_H_
