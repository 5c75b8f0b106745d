// Reading the whole file a flag names (--plan, --batch, --samples_from),
// with the one error every such flag gives when it cannot.
#ifndef RESHARD_CLIENT_FLAG_FILE_H_
#define RESHARD_CLIENT_FLAG_FILE_H_

#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace reshard::client {

// The text of `path`; NOT_FOUND `--FLAG: cannot read "PATH"` when it
// cannot be read.
inline absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag,
                                                const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  }
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_FLAG_FILE_H_
