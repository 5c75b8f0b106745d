// One text form of an agent's incarnation (a random 64-bit number per
// process, docs/DESIGN.md §5), wherever a person reads it: the agent's log,
// `job show` (text and JSON) and the Coordinator's errors print the same 16
// lowercase hex digits, so one can be searched for in the other. JSON
// carries it as that string: as a number, readers that use doubles (jq)
// would round it.
#ifndef RESHARD_COMMON_INCARNATION_TEXT_H_
#define RESHARD_COMMON_INCARNATION_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace reshard {

inline std::string IncarnationText(uint64_t incarnation) {
  return absl::StrFormat("%016x", incarnation);
}

}  // namespace reshard

#endif  // RESHARD_COMMON_INCARNATION_TEXT_H_
