// Comparing secrets (agents' sessions, tokens) in a time that does not
// depend on where a guess goes wrong, so timing cannot reveal a prefix.
#ifndef RESHARD_COMMON_SAME_SECRET_H_
#define RESHARD_COMMON_SAME_SECRET_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace reshard {

// Whether `given` equals `expected`; the time depends only on the lengths,
// which are not secret.
inline bool SameSecret(absl::string_view given, absl::string_view expected) {
  if (given.size() != expected.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    differ |= static_cast<unsigned char>(given[i] ^ expected[i]);
  }
  return differ == 0;
}

}  // namespace reshard

#endif  // RESHARD_COMMON_SAME_SECRET_H_
