#include "executor/stores/rendezvous_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"

namespace reshard::executor {

absl::StatusOr<std::unique_ptr<RendezvousDir>> RendezvousDir::Create(
    const std::string& prefix) {
  const std::string pattern = absl::StrCat("/tmp/", prefix, "-XXXXXX");
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (mkdtemp(name.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a rendezvous directory ", pattern, ": ",
                     std::strerror(errno)));
  }
  return std::unique_ptr<RendezvousDir>(new RendezvousDir(name.data()));
}

RendezvousDir::~RendezvousDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace reshard::executor
