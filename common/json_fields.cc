#include "common/json_fields.h"

#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

absl::string_view KindName(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull:
      return "null";
    case JsonValue::Kind::kBool:
      return "a boolean";
    case JsonValue::Kind::kNumber:
      return "a number";
    case JsonValue::Kind::kString:
      return "a string";
    case JsonValue::Kind::kArray:
      return "an array";
    case JsonValue::Kind::kObject:
      return "an object";
  }
  return "a value";
}

std::string MemberPath(absl::string_view field, absl::string_view key) {
  return field.empty() ? std::string(key) : absl::StrCat(field, ".", key);
}

}  // namespace

absl::Status JsonFieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

absl::StatusOr<const JsonValue*> RequiredMember(const JsonValue& object,
                                                absl::string_view key,
                                                absl::string_view field) {
  const JsonValue* v = object.Find(key);
  if (v == nullptr || v->is_null()) {
    return JsonFieldError(MemberPath(field, key), "is required");
  }
  return v;
}

absl::StatusOr<const JsonValue*> RequiredMemberOf(const JsonValue& object,
                                                  absl::string_view key,
                                                  absl::string_view field,
                                                  JsonValue::Kind kind) {
  absl::StatusOr<const JsonValue*> v = RequiredMember(object, key, field);
  if (v.ok() && (*v)->kind() != kind) {
    return JsonFieldError(MemberPath(field, key),
                          absl::StrCat("not ", KindName(kind)));
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> JsonInts(const JsonValue& v,
                                              absl::string_view field) {
  if (v.kind() != JsonValue::Kind::kArray) {
    return JsonFieldError(field, "not an array");
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.array().size(); ++i) {
    int64_t x = 0;
    if (!v.array()[i].AsInt64(&x)) {
      return JsonFieldError(absl::StrCat(field, "[", i, "]"), "not an integer");
    }
    out.push_back(x);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> JsonStrings(const JsonValue& v,
                                                     absl::string_view field) {
  if (v.kind() != JsonValue::Kind::kArray) {
    return JsonFieldError(field, "not an array");
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v.array().size(); ++i) {
    if (v.array()[i].kind() != JsonValue::Kind::kString) {
      return JsonFieldError(absl::StrCat(field, "[", i, "]"), "not a string");
    }
    out.push_back(v.array()[i].string());
  }
  return out;
}

}  // namespace reshard
