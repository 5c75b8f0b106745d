#include "client/calibration_samples_file.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "client/flag_file.h"
#include "common/json_fields.h"
#include "common/json_value.h"
#include "planner/cost/calibration_plans.h"

namespace reshard::client {
namespace {

absl::StatusOr<StepOp> OpNamed(const std::string& field,
                               const std::string& name) {
  for (StepOp op : kCalibratedOps) {
    if (StepOpName(op) == name) return op;
  }
  return JsonFieldError(field,
                        absl::StrCat("\"", name, "\" is not a calibrated op"));
}

// One saved sample of `group`: {op, bytes, measured_us[, packed_bytes]}.
absl::StatusOr<LinkSample> SampleOf(const JsonValue& s,
                                    const std::string& field, int64_t members) {
  absl::StatusOr<const JsonValue*> op =
      RequiredMemberOf(s, "op", field, JsonValue::Kind::kString);
  absl::StatusOr<const JsonValue*> bytes =
      RequiredMemberOf(s, "bytes", field, JsonValue::Kind::kNumber);
  absl::StatusOr<const JsonValue*> us =
      RequiredMemberOf(s, "measured_us", field, JsonValue::Kind::kNumber);
  for (const auto* m : {&op, &bytes, &us}) {
    if (!m->ok()) return m->status();
  }
  absl::StatusOr<StepOp> kind = OpNamed(field + ".op", (*op)->string());
  if (!kind.ok()) return kind.status();
  LinkSample sample{*kind, members, 0, (*us)->number()};
  if (!(*bytes)->AsInt64(&sample.bytes)) {
    return JsonFieldError(field + ".bytes", "not an integer");
  }
  // Optional: files written before strided gathers were timed have none.
  if (const JsonValue* packed = s.Find("packed_bytes"); packed != nullptr) {
    if (packed->kind() != JsonValue::Kind::kNumber ||
        !packed->AsInt64(&sample.packed_bytes) || sample.packed_bytes < 0) {
      return JsonFieldError(field + ".packed_bytes",
                            "not a non-negative integer");
    }
  }
  return sample;
}

// The samples of groups[index] of the file, on `mesh`'s group of its name.
absl::Status AddGroup(const JsonValue& g, size_t index, const Mesh& mesh,
                      std::vector<CalibrationSample>& samples) {
  const std::string field = absl::StrCat("groups[", index, "]");
  absl::StatusOr<const JsonValue*> name =
      RequiredMemberOf(g, "group", field, JsonValue::Kind::kString);
  if (!name.ok()) return name.status();
  const Group* group = nullptr;
  const std::vector<Group> groups = CalibrationGroups(mesh);
  for (const Group& candidate : groups) {
    if (mesh.GroupName(candidate) == (*name)->string()) group = &candidate;
  }
  if (group == nullptr) {
    return JsonFieldError(field + ".group",
                          absl::StrCat("\"", (*name)->string(),
                                       "\" is not calibrated on this mesh"));
  }
  absl::StatusOr<const JsonValue*> list =
      RequiredMemberOf(g, "samples", field, JsonValue::Kind::kArray);
  if (!list.ok()) return list.status();
  // Each op's sizes, and the strided gathers', ascend in run order.
  std::map<std::pair<StepOp, bool>, int> next_index;
  for (size_t i = 0; i < (*list)->array().size(); ++i) {
    absl::StatusOr<LinkSample> s =
        SampleOf((*list)->array()[i], absl::StrCat(field, ".samples[", i, "]"),
                 mesh.GroupSize(*group));
    if (!s.ok()) return s.status();
    samples.push_back({*group, next_index[{s->op, s->packed_bytes > 0}]++, *s});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SavedSweep> ParseCalibrationJson(absl::string_view text,
                                                const Mesh& mesh) {
  absl::StatusOr<JsonValue> root = JsonValue::Parse(text);
  if (!root.ok()) return root.status();
  SavedSweep sweep;
  absl::StatusOr<const JsonValue*> sizes = RequiredMember(*root, "sizes", "");
  if (!sizes.ok()) return sizes.status();
  absl::StatusOr<std::vector<int64_t>> bytes = JsonInts(**sizes, "sizes");
  if (!bytes.ok()) return bytes.status();
  sweep.sizes = *std::move(bytes);
  absl::StatusOr<const JsonValue*> groups =
      RequiredMemberOf(*root, "groups", "", JsonValue::Kind::kArray);
  if (!groups.ok()) return groups.status();
  for (size_t i = 0; i < (*groups)->array().size(); ++i) {
    absl::Status s = AddGroup((*groups)->array()[i], i, mesh, sweep.samples);
    if (!s.ok()) return s;
  }
  if (sweep.sizes.empty()) return JsonFieldError("sizes", "empty");
  return sweep;
}

absl::StatusOr<SavedSweep> ReadCalibrationJson(const std::string& path,
                                               const Mesh& mesh) {
  absl::StatusOr<std::string> text = ReadFlagFile("samples_from", path);
  if (!text.ok()) return text.status();
  absl::StatusOr<SavedSweep> sweep = ParseCalibrationJson(*text, mesh);
  if (!sweep.ok()) {
    return absl::Status(
        sweep.status().code(),
        absl::StrCat("--samples_from ", path, ": ", sweep.status().message()));
  }
  return sweep;
}

}  // namespace reshard::client
