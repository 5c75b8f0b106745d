// The one form of a validation error (docs/DESIGN.md §5): INVALID_ARGUMENT
// whose message starts with the field it concerns, `mesh.dim_names[2]:
// duplicate name "B"`.
#ifndef RESHARD_PLANNER_CORE_FIELD_ERROR_H_
#define RESHARD_PLANNER_CORE_FIELD_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace reshard {

// INVALID_ARGUMENT "`field`: `problem`".
inline absl::Status InvalidField(absl::string_view field,
                                 absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_FIELD_ERROR_H_
