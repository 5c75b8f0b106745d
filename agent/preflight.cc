#include "agent/preflight.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/error_kind.h"
#include "executor/runtime/digest_exchange.h"

namespace reshard::agent {

PreflightOutcome Preflight(const Mesh& mesh, const absl::Status& binding,
                           executor::CommunicatorProvider& provider,
                           executor::MemorySpace& space) {
  absl::StatusOr<std::vector<int64_t>> codes = executor::AllGatherWord(
      mesh, static_cast<int64_t>(binding.code()), provider, space);
  if (!codes.ok()) {
    // The exchange broke: the communicators are suspect, whatever the
    // binding said.
    if (binding.ok()) return {codes.status(), false};
    return {absl::Status(codes.status().code(),
                         absl::StrCat(binding.message(),
                                      "; the pre-flight exchange failed too: ",
                                      codes.status().message())),
            false};
  }
  if (!binding.ok()) return {MarkErrorKind(binding, ErrorKind::kBinding)};
  std::vector<int64_t> refusing;
  for (size_t i = 0; i < codes->size(); ++i) {
    if ((*codes)[i] != 0) {
      refusing.push_back(mesh.RankAt(static_cast<int64_t>(i)));
    }
  }
  if (refusing.empty()) return {};
  return {absl::AbortedError(
      absl::StrCat("not run: ranks [", absl::StrJoin(refusing, ","),
                   "] refused their registered tensors in pre-flight"))};
}

}  // namespace reshard::agent
