#include "planner/search/plan_warnings.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace reshard {

void AddWarning(std::vector<Warning>& warnings, Warning w) {
  for (const Warning& existing : warnings) {
    if (existing.code == w.code && existing.dims == w.dims) return;
  }
  warnings.push_back(std::move(w));
}

std::string QuotedDims(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const std::string& n : names) {
    quoted.push_back(absl::StrCat("\"", n, "\""));
  }
  return absl::StrCat("(", absl::StrJoin(quoted, ", "), ")");
}

std::vector<std::string> GroupDimNames(const Mesh& mesh,
                                       absl::Span<const int> group) {
  std::vector<std::string> names;
  for (int d : group) names.push_back(mesh.dim_names()[d]);
  return names;
}

std::string RegisterGroupAdvice(const Mesh& mesh, absl::Span<const int> group) {
  const std::vector<std::string> names = GroupDimNames(mesh, group);
  const std::string quoted = QuotedDims(names);
  const std::string how =
      absl::StrCat("register the flattened group ", quoted,
                   " with the mesh (mesh.flattened; reshardctl: --flatten ",
                   absl::StrJoin(names, ","));
  if (std::is_sorted(group.begin(), group.end())) {
    return absl::StrCat(how, "; PyTorch: mesh[",
                        quoted.substr(1, quoted.size() - 2), "]._flatten())");
  }
  return absl::StrCat(how,
                      "); PyTorch can flatten only ascending dims, Reshard's "
                      "executor (reshardctl exec) creates the group in this "
                      "order");
}

std::string SavingText(double saving_us, double of_us) {
  return of_us > 0 ? absl::StrFormat("%.4g us (%.1f%%)", saving_us,
                                     100 * saving_us / of_us)
                   : absl::StrFormat("%.4g us", saving_us);
}

}  // namespace reshard
