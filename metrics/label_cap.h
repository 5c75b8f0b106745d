// A bound on the distinct values of one label (docs/DESIGN.md §7: `group`
// labels are capped at 64 per process), so a process that meets many meshes
// cannot grow its series without bound: the first `cap` distinct values pass as
// they are, later ones become `other`. Values seen before keep passing.
// Thread-safe.
#ifndef RESHARD_METRICS_LABEL_CAP_H_
#define RESHARD_METRICS_LABEL_CAP_H_

#include <cstddef>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace reshard::metrics {

class LabelCap {
 public:
  // The label value past the cap.
  static constexpr char kOther[] = "other";
  // docs/DESIGN.md §7's cap on `group` labels.
  static constexpr size_t kGroupCap = 64;

  explicit LabelCap(size_t cap) : cap_(cap) {}

  // `value` while it is one of the first `cap` distinct values, else kOther.
  std::string Admit(const std::string& value);

 private:
  const size_t cap_;
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> admitted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace reshard::metrics

#endif  // RESHARD_METRICS_LABEL_CAP_H_
