// A minimal JSON reader for test data files (objects, arrays, strings,
// numbers, booleans, null). Test-only: it trusts its input.
#ifndef RESHARD_TESTS_JSON_LITE_H_
#define RESHARD_TESTS_JSON_LITE_H_

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace reshard::testing {

struct Json {
  enum class Kind {
    kNull,
    kBool,
    kNumber,
    kString,
    kArray,
    kObject
  } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  bool Has(const std::string& key) const { return object.count(key) > 0; }
  const Json& operator[](const std::string& key) const {
    return object.at(key);
  }
  int64_t Int() const { return static_cast<int64_t>(number); }
  std::vector<int64_t> Ints() const {
    std::vector<int64_t> out;
    for (const Json& j : array) out.push_back(j.Int());
    return out;
  }
  std::vector<std::string> Strings() const {
    std::vector<std::string> out;
    for (const Json& j : array) out.push_back(j.string);
    return out;
  }

  static Json Parse(const std::string& text) {
    size_t pos = 0;
    return ParseValue(text, pos);
  }

 private:
  static void Skip(const std::string& t, size_t& p) {
    while (p < t.size() &&
           (t[p] == ' ' || t[p] == '\n' || t[p] == '\t' || t[p] == '\r')) {
      ++p;
    }
  }
  static std::string ParseString(const std::string& t, size_t& p) {
    std::string out;
    ++p;  // opening quote
    while (t[p] != '"') {
      if (t[p] == '\\') ++p;
      out += t[p++];
    }
    ++p;
    return out;
  }
  static Json ParseValue(const std::string& t, size_t& p) {
    Skip(t, p);
    Json j;
    if (t[p] == '{') {
      j.kind = Kind::kObject;
      ++p;
      Skip(t, p);
      while (t[p] != '}') {
        Skip(t, p);
        std::string key = ParseString(t, p);
        Skip(t, p);
        ++p;  // ':'
        j.object[key] = ParseValue(t, p);
        Skip(t, p);
        if (t[p] == ',') ++p;
        Skip(t, p);
      }
      ++p;
    } else if (t[p] == '[') {
      j.kind = Kind::kArray;
      ++p;
      Skip(t, p);
      while (t[p] != ']') {
        j.array.push_back(ParseValue(t, p));
        Skip(t, p);
        if (t[p] == ',') ++p;
        Skip(t, p);
      }
      ++p;
    } else if (t[p] == '"') {
      j.kind = Kind::kString;
      j.string = ParseString(t, p);
    } else if (t.compare(p, 4, "true") == 0) {
      j.kind = Kind::kBool;
      j.boolean = true;
      p += 4;
    } else if (t.compare(p, 5, "false") == 0) {
      j.kind = Kind::kBool;
      p += 5;
    } else if (t.compare(p, 4, "null") == 0) {
      p += 4;
    } else {
      j.kind = Kind::kNumber;
      char* end = nullptr;
      j.number = std::strtod(t.c_str() + p, &end);
      p = end - t.c_str();
    }
    return j;
  }
};

// One Json per non-empty line of the file at `path` (JSON Lines); none when
// the file cannot be read.
inline std::vector<Json> LoadJsonLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<Json> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(Json::Parse(line));
  }
  return lines;
}

}  // namespace reshard::testing

#endif  // RESHARD_TESTS_JSON_LITE_H_
