// The vocabulary every planner's warnings share (docs/DESIGN.md §3.4): adding a
// warning without duplicates, quoting mesh dims, and the one remedy a
// missing_flattened_group warning gives, so that the merge pass and the
// optimal planner give the same advice in the same words.
#ifndef RESHARD_PLANNER_SEARCH_PLAN_WARNINGS_H_
#define RESHARD_PLANNER_SEARCH_PLAN_WARNINGS_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "planner/core/mesh.h"
#include "planner/core/plan.h"

namespace reshard {

// Appends `w` unless a warning with the same code and dims is present.
void AddWarning(std::vector<Warning>& warnings, Warning w);

// `("A", "C")`.
std::string QuotedDims(const std::vector<std::string>& names);

// The names of `group`'s dims, in the group's order.
std::vector<std::string> GroupDimNames(const Mesh& mesh,
                                       absl::Span<const int> group);

// What a user can do today to make `group` usable: register it with the
// mesh, by the API field and the CLI flag, and for ascending dims PyTorch's
// `mesh["A", "C"]._flatten()`; for other orders, that PyTorch cannot
// flatten them but Reshard's executor creates the group in that order.
std::string RegisterGroupAdvice(const Mesh& mesh, absl::Span<const int> group);

// "12.5 us (42.1%)": a saving and its share of `of`.
std::string SavingText(double saving_us, double of_us);

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_PLAN_WARNINGS_H_
