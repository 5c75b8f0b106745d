// FNV-1a, 64-bit: a stable hash of bytes, equal in every process and on every
// machine (absl::Hash is seeded per process). Mesh ids and plan digests are
// such hashes, so replicas and ranks derive the same values independently.
#ifndef RESHARD_COMMON_FNV1A_H_
#define RESHARD_COMMON_FNV1A_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace reshard {

inline uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace reshard

#endif  // RESHARD_COMMON_FNV1A_H_
