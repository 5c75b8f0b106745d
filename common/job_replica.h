// Which replica of the service serves a job. Job state lives in the replica
// that serves it (docs/DESIGN.md §5), so a job's agents and every caller that
// runs or inspects it must reach the same replica from their own copy of the
// replica list. Rendezvous (highest-random-weight) hashing: each replica
// scores hash(replica, job) and the highest wins. The answer depends on the
// set of replicas, not on the order they are listed in, and removing a
// replica moves only the jobs it served. Pure and header-only so that the
// agent and the client library share it without linking each other.
#ifndef RESHARD_COMMON_JOB_REPLICA_H_
#define RESHARD_COMMON_JOB_REPLICA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/fnv1a.h"

namespace reshard {

// "h1:p1, h2:p2" -> {"h1:p1", "h2:p2"}: split at commas, blanks trimmed,
// empty entries dropped.
inline std::vector<std::string> SplitReplicaList(absl::string_view text) {
  std::vector<std::string> replicas;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) replicas.emplace_back(part);
  }
  return replicas;
}

// The index in `replicas` of the one that serves `job`; replicas.size()
// when the list is empty. Of equal entries, the first is named.
inline size_t ReplicaIndexForJob(absl::string_view job,
                                 const std::vector<std::string>& replicas) {
  size_t best = replicas.size();
  uint64_t best_score = 0;
  for (size_t i = 0; i < replicas.size(); ++i) {
    // FNV-1a mixes its last bytes into the high bits poorly, and the
    // comparison reads the high bits first: finish with MurmurHash3's
    // 64-bit finalizer so every bit of the key moves the score.
    uint64_t h = Fnv1a64(absl::StrCat(replicas[i], "\n", job));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    // Equal scores (collisions) go to the smaller text, so the list's
    // order never matters.
    if (best == replicas.size() || h > best_score ||
        (h == best_score && replicas[i] < replicas[best])) {
      best = i;
      best_score = h;
    }
  }
  return best;
}

// The replica that serves `job` ("" when `replicas` is empty).
inline std::string ReplicaForJob(const std::string& job,
                                 const std::vector<std::string>& replicas) {
  const size_t i = ReplicaIndexForJob(job, replicas);
  return i < replicas.size() ? replicas[i] : std::string();
}

}  // namespace reshard

#endif  // RESHARD_COMMON_JOB_REPLICA_H_
