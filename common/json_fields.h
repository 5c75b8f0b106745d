// Reading a JSON document's fields with errors that name them: every
// reader of a file or message the project writes (a plan, a calibration
// sweep) says "FIELD: WHAT" in the same words, FIELD the path to the value
// ("plan.mesh.shape[2]", "groups[0].samples").
#ifndef RESHARD_COMMON_JSON_FIELDS_H_
#define RESHARD_COMMON_JSON_FIELDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/json_value.h"

namespace reshard {

// INVALID_ARGUMENT "FIELD: WHAT".
absl::Status JsonFieldError(absl::string_view field, absl::string_view what);

// The member `key` of `object` (at `field`; empty for the document),
// present and not null, else "FIELD.KEY: is required".
absl::StatusOr<const JsonValue*> RequiredMember(const JsonValue& object,
                                                absl::string_view key,
                                                absl::string_view field);

// RequiredMember of kind `kind`, else "FIELD.KEY: not a string" (an array,
// a number, ...).
absl::StatusOr<const JsonValue*> RequiredMemberOf(const JsonValue& object,
                                                  absl::string_view key,
                                                  absl::string_view field,
                                                  JsonValue::Kind kind);

// `v` as an array of integers ("FIELD: not an array", "FIELD[i]: not an
// integer") or of strings ("FIELD[i]: not a string").
absl::StatusOr<std::vector<int64_t>> JsonInts(const JsonValue& v,
                                              absl::string_view field);
absl::StatusOr<std::vector<std::string>> JsonStrings(const JsonValue& v,
                                                     absl::string_view field);

}  // namespace reshard

#endif  // RESHARD_COMMON_JSON_FIELDS_H_
