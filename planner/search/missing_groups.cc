#include "planner/search/missing_groups.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "planner/search/plan_warnings.h"

namespace reshard {
namespace {

// The multi-dim groups `steps` use that `mesh` does not register, in the
// order of their first use.
std::vector<Group> UnregisteredGroups(const Mesh& mesh,
                                      const std::vector<Step>& steps) {
  std::vector<Group> groups;
  for (const Step& step : steps) {
    if (step.group.size() < 2 || mesh.IsRegistered(step.group)) continue;
    if (std::find(groups.begin(), groups.end(), step.group) == groups.end()) {
      groups.push_back(step.group);
    }
  }
  return groups;
}

// The cost of the best plan for `request` with `group` registered as well,
// when it is clearly below `cost`; nullopt when no such plan is cheaper;
// the search's status when it could not tell (budget, stop).
absl::StatusOr<std::optional<double>> CostWithGroup(const Mesh& mesh,
                                                    const PlanRequest& request,
                                                    absl::Span<const int> group,
                                                    double cost,
                                                    const StopCheck& stop) {
  const Mesh with = mesh.WithFlattened(group);
  const PlanOptions& options = request.options;
  const CostModel model(with, request.tensor,
                        {options.cost_model, options.devices_per_host});
  SearchOptions search;
  search.flatten_policy = FlattenPolicy::kExisting;
  search.budget = options.search_budget;
  search.max_peak_bytes = options.max_peak_bytes;
  search.cost_bound = cost * kCostBoundSlack;
  search.stop = stop;
  absl::StatusOr<SearchResult> result =
      OptimalSearch(with, model, request.src, request.dst, search);
  if (result.ok()) return result->cost;
  if (result.status().code() == absl::StatusCode::kNotFound) {
    return std::nullopt;
  }
  return result.status();
}

// What registering `group` alone does to a plan of `cost` (`with`: the
// pricing result), and the saving to report.
std::string OwnEffect(const std::string& dims, double cost,
                      const absl::StatusOr<std::optional<double>>& with,
                      double& saving) {
  saving = 0;
  if (!with.ok()) {
    return absl::StrCat("what registering mesh dims ", dims,
                        " alone as a flattened group would save is unknown (",
                        with.status().message(), ")");
  }
  if (!with->has_value()) {
    return absl::StrFormat(
        "registering mesh dims %s alone as a flattened group would not "
        "lower the plan (%.4g us)",
        dims, cost);
  }
  saving = cost - **with;
  return absl::StrFormat(
      "registering mesh dims %s as a flattened group would lower the plan "
      "from %.4g us to %.4g us, saving %s",
      dims, cost, **with, SavingText(saving, cost));
}

}  // namespace

void AddMissingGroupWarnings(const Mesh& mesh, const PlanRequest& request,
                             double cost, const SearchResult& cheaper,
                             const StopCheck& stop,
                             std::vector<Warning>& warnings) {
  const std::vector<Group> groups = UnregisteredGroups(mesh, cheaper.steps);
  std::string together;
  if (groups.size() >= 2) {
    std::vector<std::string> all;
    for (const Group& g : groups) {
      all.push_back(QuotedDims(GroupDimNames(mesh, g)));
    }
    together = absl::StrFormat(
        "; with all of %s registered the plan would cost %.4g us, saving %s",
        absl::StrJoin(all, ", "), cheaper.cost,
        SavingText(cost - cheaper.cost, cost));
  }
  for (const Group& group : groups) {
    const absl::StatusOr<std::optional<double>> with =
        groups.size() == 1 ? absl::StatusOr<std::optional<double>>(cheaper.cost)
                           : CostWithGroup(mesh, request, group, cost, stop);
    const std::vector<std::string> names = GroupDimNames(mesh, group);
    double saving = 0;
    const std::string effect = OwnEffect(QuotedDims(names), cost, with, saving);
    AddWarning(warnings, {WarningCode::kMissingFlattenedGroup, names,
                          absl::StrCat(effect, together, "; ",
                                       RegisterGroupAdvice(mesh, group)),
                          saving});
  }
}

}  // namespace reshard
