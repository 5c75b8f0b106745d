#include "common/json_value.h"

#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace reshard {

class JsonParser {
 public:
  explicit JsonParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> Document() {
    JsonValue v;
    absl::Status s = Value(v, 0);
    if (!s.ok()) return s;
    Skip();
    if (at_ != text_.size()) return Error("trailing characters");
    return v;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("json: ", what, " at byte ", at_));
  }
  void Skip() {
    while (at_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[at_]))) {
      ++at_;
    }
  }
  bool Literal(absl::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  absl::Status Value(JsonValue& v, int depth) {
    if (depth > 64) return Error("nesting too deep");
    Skip();
    if (at_ >= text_.size()) return Error("unexpected end");
    const char c = text_[at_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v.kind_ = JsonValue::Kind::kString;
      return String(v.string_);
    }
    if (Literal("null")) return absl::OkStatus();
    if (Literal("true") || Literal("false")) {
      v.kind_ = JsonValue::Kind::kBool;
      v.bool_ = text_[at_ - 1] == 'e' && text_[at_ - 2] == 'u';
      return absl::OkStatus();
    }
    return Number(v);
  }

  absl::Status Number(JsonValue& v) {
    const size_t start = at_;
    while (at_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[at_])) ||
            absl::string_view("+-.eE").find(text_[at_]) !=
                absl::string_view::npos)) {
      ++at_;
    }
    v.string_ = std::string(text_.substr(start, at_ - start));
    if (v.string_.empty() || !absl::SimpleAtod(v.string_, &v.number_)) {
      at_ = start;
      return Error("expected a value");
    }
    v.kind_ = JsonValue::Kind::kNumber;
    return absl::OkStatus();
  }

  absl::Status String(std::string& out) {
    ++at_;  // the opening quote
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ >= text_.size()) break;
        c = text_[at_++];
        switch (c) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case 'b':
            c = '\b';
            break;
          case 'f':
            c = '\f';
            break;
          case 'u':
            return Error("\\u escapes are not supported");
          default:
            break;  // \" \\ \/
        }
      }
      out.push_back(c);
    }
    if (at_ >= text_.size()) return Error("unterminated string");
    ++at_;
    return absl::OkStatus();
  }

  absl::Status Array(JsonValue& v, int depth) {
    v.kind_ = JsonValue::Kind::kArray;
    ++at_;
    Skip();
    if (at_ < text_.size() && text_[at_] == ']') return ++at_, absl::OkStatus();
    while (true) {
      v.array_.emplace_back();
      absl::Status s = Value(v.array_.back(), depth + 1);
      if (!s.ok()) return s;
      Skip();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == ']')
        return ++at_, absl::OkStatus();
      return Error("expected ',' or ']'");
    }
  }

  absl::Status Object(JsonValue& v, int depth) {
    v.kind_ = JsonValue::Kind::kObject;
    ++at_;
    Skip();
    if (at_ < text_.size() && text_[at_] == '}') return ++at_, absl::OkStatus();
    while (true) {
      Skip();
      if (at_ >= text_.size() || text_[at_] != '"')
        return Error("expected a key");
      std::string key;
      absl::Status s = String(key);
      if (!s.ok()) return s;
      Skip();
      if (at_ >= text_.size() || text_[at_] != ':')
        return Error("expected ':'");
      ++at_;
      s = Value(v.object_[key], depth + 1);
      if (!s.ok()) return s;
      Skip();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < text_.size() && text_[at_] == '}')
        return ++at_, absl::OkStatus();
      return Error("expected ',' or '}'");
    }
  }

  absl::string_view text_;
  size_t at_ = 0;
};

absl::StatusOr<JsonValue> JsonValue::Parse(absl::string_view text) {
  return JsonParser(text).Document();
}

bool JsonValue::AsInt64(int64_t* out) const {
  return kind_ == Kind::kNumber && absl::SimpleAtoi(string_, out);
}

std::vector<std::string> JsonValue::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(object_.size());
  for (const auto& [key, value] : object_) keys.push_back(key);
  return keys;
}

const JsonValue* JsonValue::Find(absl::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &it->second;
}

}  // namespace reshard
