#include "run_values/backend.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace reshard {
namespace {

constexpr std::array<std::pair<Backend, absl::string_view>, 2> kNames = {{
    {Backend::kGloo, "gloo"},
    {Backend::kNccl, "nccl"},
}};

}  // namespace

absl::string_view BackendName(Backend backend) {
  for (const auto& [b, name] : kNames) {
    if (b == backend) return name;
  }
  return "unknown";
}

absl::StatusOr<Backend> ParseBackend(absl::string_view name,
                                     absl::string_view field) {
  for (const auto& [b, spelled] : kNames) {
    if (spelled == name) return b;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": unknown backend \"", name, "\"; expected gloo or nccl"));
}

}  // namespace reshard
