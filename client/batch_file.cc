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
constexpr absl::string_view kSourceKeys[] = {"src_mesh", "src_ranks",
                                             "src_flatten"};

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

// Integer array `key` into `out`; absent keys leave `out` unless required.
absl::Status IntsKey(const JsonValue& v, absl::string_view key, bool required,
                     size_t line, std::vector<int64_t>& out) {
  const JsonValue* field = v.Find(key);
  if (field == nullptr) {
    return required ? LineError(line, absl::StrCat("\"", key, "\" is missing"))
                    : absl::OkStatus();
  }
  const std::string wrong =
      absl::StrCat("\"", key, "\" must be an array of integers");
  if (field->kind() != JsonValue::Kind::kArray) return LineError(line, wrong);
  for (const JsonValue& e : field->array()) {
    int64_t value = 0;
    if (e.kind() != JsonValue::Kind::kNumber || !e.AsInt64(&value)) {
      return LineError(line, wrong);
    }
    out.push_back(value);
  }
  return absl::OkStatus();
}

// String array `key` into `out` (absent: left empty).
absl::Status StringsKey(const JsonValue& v, absl::string_view key, size_t line,
                        std::vector<std::string>& out) {
  const JsonValue* field = v.Find(key);
  if (field == nullptr) return absl::OkStatus();
  const std::string wrong =
      absl::StrCat("\"", key, "\" must be an array of strings");
  if (field->kind() != JsonValue::Kind::kArray) return LineError(line, wrong);
  for (const JsonValue& e : field->array()) {
    if (e.kind() != JsonValue::Kind::kString) return LineError(line, wrong);
    out.push_back(e.string());
  }
  return absl::OkStatus();
}

// Keys outside the five are refused: a misspelt "dtpye" would otherwise
// plan float32 silently.
absl::Status OnlyKnownKeys(const JsonValue& v, size_t line,
                           bool source_meshes) {
  if (v.kind() != JsonValue::Kind::kObject) {
    return LineError(line, "expected a JSON object");
  }
  for (const std::string& key : v.Keys()) {
    const bool known =
        std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys) ||
        (source_meshes &&
         std::find(std::begin(kSourceKeys), std::end(kSourceKeys), key) !=
             std::end(kSourceKeys));
    if (!known) {
      return LineError(
          line, absl::StrCat(
                    "unknown key \"", key,
                    "\"; expected name, shape, dtype, from, to",
                    source_meshes ? ", src_mesh, src_ranks, src_flatten" : ""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchFileItem> ParseLine(absl::string_view text, size_t line,
                                        size_t index, bool source_meshes) {
  absl::StatusOr<JsonValue> v = JsonValue::Parse(text);
  if (!v.ok()) return LineError(line, v.status().message());
  if (absl::Status s = OnlyKnownKeys(*v, line, source_meshes); !s.ok()) {
    return s;
  }
  BatchFileItem item{absl::StrCat("items[", index, "]"), {}, "float32"};
  item.line = line;
  for (absl::Status s :
       {StringKey(*v, "name", false, line, item.name),
        IntsKey(*v, "shape", true, line, item.shape),
        StringKey(*v, "dtype", false, line, item.dtype),
        StringKey(*v, "from", true, line, item.from),
        StringKey(*v, "to", true, line, item.to),
        StringKey(*v, "src_mesh", false, line, item.src_mesh),
        IntsKey(*v, "src_ranks", false, line, item.src_ranks),
        StringsKey(*v, "src_flatten", line, item.src_flatten)}) {
    if (!s.ok()) return s;
  }
  return item;
}

}  // namespace

absl::StatusOr<std::vector<BatchFileItem>> ParseBatchFile(
    absl::string_view text, bool source_meshes) {
  std::vector<BatchFileItem> items;
  size_t line = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line;
    const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    if (stripped.empty()) continue;
    absl::StatusOr<BatchFileItem> item =
        ParseLine(stripped, line, items.size(), source_meshes);
    if (!item.ok()) return item.status();
    items.push_back(*std::move(item));
  }
  if (items.empty()) {
    return absl::InvalidArgumentError("no items (one JSON object per line)");
  }
  return items;
}

absl::StatusOr<std::vector<BatchFileItem>> ReadBatchFile(
    const std::string& path, bool source_meshes) {
  absl::StatusOr<std::string> text = ReadFlagFile("batch", path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<BatchFileItem>> items =
      ParseBatchFile(*text, source_meshes);
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
