// The wire form of the reports rank processes send their parent through a
// pipe (executor/judge/harness.h): newline-separated fields, text
// numbers (doubles with 17 digits) and length-prefixed blobs, so messages
// may hold any byte.
#ifndef RESHARD_RUN_VALUES_REPORT_CODEC_H_
#define RESHARD_RUN_VALUES_REPORT_CODEC_H_

#include <cstddef>
#include <string>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace reshard::executor {

// Reads fields in order; every method returns false at the first field
// that is missing or malformed.
class ReportReader {
 public:
  explicit ReportReader(const std::string& bytes) : bytes_(bytes) {}
  bool Line(std::string& out) {
    const size_t end = bytes_.find('\n', at_);
    if (end == std::string::npos) return false;
    out = bytes_.substr(at_, end - at_);
    at_ = end + 1;
    return true;
  }
  template <typename T>
  bool Number(T& out) {
    std::string line;
    if (!Line(line)) return false;
    if constexpr (std::is_same_v<T, double>) {
      return absl::SimpleAtod(line, &out);
    } else {
      return absl::SimpleAtoi(line, &out);
    }
  }
  bool Blob(std::string& out) {
    size_t size = 0;
    if (!Number(size) || at_ + size > bytes_.size()) return false;
    out = bytes_.substr(at_, size);
    at_ += size;
    return true;
  }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

inline void AppendBlob(std::string& out, absl::string_view blob) {
  absl::StrAppend(&out, blob.size(), "\n", blob);
}

// A double that reads back exactly.
inline void AppendDouble(std::string& out, double value) {
  absl::StrAppend(&out, absl::StrFormat("%.17g\n", value));
}

}  // namespace reshard::executor

#endif  // RESHARD_RUN_VALUES_REPORT_CODEC_H_
