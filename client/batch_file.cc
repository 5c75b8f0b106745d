#include "client/batch_file.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/flag_file.h"
#include "common/json_value.h"

namespace reshard::client {
namespace {

constexpr absl::string_view kKeys[] = {"name", "shape", "dtype", "from", "to"};

absl::Status LineError(size_t line, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", problem));
}

// `key` as a string into `out`; absent keys leave `out` unless required.
absl::Status StringKey(const JsonValue& v, absl::string_view key, bool required,
                       size_t line, std::string& out) {
  const JsonValue* field = v.Find(key);
  if (field == nullptr) {
    return required ? LineError(line, absl::StrCat("\"", key, "\" is missing"))
                    : absl::OkStatus();
  }
  if (field->kind() != JsonValue::Kind::kString) {
    return LineError(line, absl::StrCat("\"", key, "\" must be a string"));
  }
  out = field->string();
  return absl::OkStatus();
}

absl::Status ShapeKey(const JsonValue& v, size_t line,
                      std::vector<int64_t>& out) {
  const JsonValue* shape = v.Find("shape");
  if (shape == nullptr) return LineError(line, "\"shape\" is missing");
  if (shape->kind() != JsonValue::Kind::kArray) {
    return LineError(line, "\"shape\" must be an array of integers");
  }
  for (const JsonValue& e : shape->array()) {
    int64_t size = 0;
    if (e.kind() != JsonValue::Kind::kNumber || !e.AsInt64(&size)) {
      return LineError(line, "\"shape\" must be an array of integers");
    }
    out.push_back(size);
  }
  return absl::OkStatus();
}

// Keys outside the five are refused: a misspelt "dtpye" would otherwise
// plan float32 silently.
absl::Status OnlyKnownKeys(const JsonValue& v, size_t line) {
  if (v.kind() != JsonValue::Kind::kObject) {
    return LineError(line, "expected a JSON object");
  }
  for (const std::string& key : v.Keys()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      return LineError(line, absl::StrCat("unknown key \"", key,
                                          "\"; expected name, shape, dtype, "
                                          "from, to"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchFileItem> ParseLine(absl::string_view text, size_t line,
                                        size_t index) {
  absl::StatusOr<JsonValue> v = JsonValue::Parse(text);
  if (!v.ok()) return LineError(line, v.status().message());
  if (absl::Status s = OnlyKnownKeys(*v, line); !s.ok()) return s;
  BatchFileItem item{absl::StrCat("items[", index, "]"), {}, "float32"};
  item.line = line;
  for (absl::Status s : {StringKey(*v, "name", false, line, item.name),
                         ShapeKey(*v, line, item.shape),
                         StringKey(*v, "dtype", false, line, item.dtype),
                         StringKey(*v, "from", true, line, item.from),
                         StringKey(*v, "to", true, line, item.to)}) {
    if (!s.ok()) return s;
  }
  return item;
}

}  // namespace

absl::StatusOr<std::vector<BatchFileItem>> ParseBatchFile(
    absl::string_view text) {
  std::vector<BatchFileItem> items;
  size_t line = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line;
    const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    if (stripped.empty()) continue;
    absl::StatusOr<BatchFileItem> item =
        ParseLine(stripped, line, items.size());
    if (!item.ok()) return item.status();
    items.push_back(*std::move(item));
  }
  if (items.empty()) {
    return absl::InvalidArgumentError("no items (one JSON object per line)");
  }
  return items;
}

absl::StatusOr<std::vector<BatchFileItem>> ReadBatchFile(
    const std::string& path) {
  absl::StatusOr<std::string> text = ReadFlagFile("batch", path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<BatchFileItem>> items = ParseBatchFile(*text);
  if (!items.ok()) {
    return absl::Status(
        items.status().code(),
        absl::StrCat("--batch ", path, " ", items.status().message()));
  }
  return items;
}

std::vector<absl::StatusOr<PlanRequest>> BatchRequests(
    const Mesh& mesh, const std::vector<BatchFileItem>& items,
    const PlanOptions& options) {
  std::vector<absl::StatusOr<PlanRequest>> requests;
  requests.reserve(items.size());
  for (const BatchFileItem& item : items) {
    requests.push_back(ParsePlanRequest(mesh, item.shape, item.dtype, item.from,
                                        item.to, options));
  }
  return requests;
}

std::vector<std::string> BatchNames(const std::vector<BatchFileItem>& items) {
  std::vector<std::string> names;
  names.reserve(items.size());
  for (const BatchFileItem& item : items) names.push_back(item.name);
  return names;
}

}  // namespace reshard::client
