#include "metrics/port_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace reshard::metrics {
namespace {

absl::Status PortFileError(absl::string_view flag, const std::string& path,
                           absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "--", flag, "=", path, ": cannot ", what, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status ProbePortFile(absl::string_view flag, const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  const std::string probe = path + ".tmp";
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return PortFileError(flag, path, "write " + probe);
  close(fd);
  unlink(probe.c_str());
  return absl::OkStatus();
}

absl::Status WritePortFile(absl::string_view flag, const std::string& path,
                           int port) {
  if (path.empty()) return absl::OkStatus();
  const std::string tmp = path + ".tmp";
  FILE* file = std::fopen(tmp.c_str(), "w");
  if (file == nullptr) return PortFileError(flag, path, "write " + tmp);
  const bool written = std::fprintf(file, "%d\n", port) > 0;
  if (std::fclose(file) != 0 || !written) {
    return PortFileError(flag, path, "write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return PortFileError(flag, path, "rename " + tmp + " to it");
  }
  return absl::OkStatus();
}

}  // namespace reshard::metrics
