// A small JSON reader for plan files (docs/DESIGN.md §4): a parsed document as
// a tree of values. Numbers are kept as doubles (and their text, for exact
// integers); errors name the byte offset.
#ifndef RESHARD_COMMON_JSON_VALUE_H_
#define RESHARD_COMMON_JSON_VALUE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  // INVALID_ARGUMENT "json: <what> at byte N" on malformed text; nesting
  // deeper than 64 is refused.
  static absl::StatusOr<JsonValue> Parse(absl::string_view text);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool boolean() const { return bool_; }
  double number() const { return number_; }
  // The number as an exact integer, if it is one.
  bool AsInt64(int64_t* out) const;
  const std::string& string() const { return string_; }
  const std::vector<JsonValue>& array() const { return array_; }
  // The member `key` of an object, or nullptr.
  const JsonValue* Find(absl::string_view key) const;
  // The member names of an object, sorted (empty for other kinds).
  std::vector<std::string> Keys() const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;  // strings, and the text of numbers
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue, std::less<>> object_;
};

}  // namespace reshard

#endif  // RESHARD_COMMON_JSON_VALUE_H_
