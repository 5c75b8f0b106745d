// What --help and --version print for Reshard's programs that parse absl
// flags. absl's defaults do not fit them: --help lists only the flags of a
// source file named after the program ("reshard-planner.cc"), which none
// has, so it printed "No flags matched"; --version printed only whether
// NDEBUG was defined. For programs only (they link absl::flags); it sits
// beside version.h so that every program can include it.
#ifndef RESHARD_COMMON_FLAGS_USAGE_H_
#define RESHARD_COMMON_FLAGS_USAGE_H_

#include <string>

#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/version.h"

namespace reshard {

// The source files of flags several programs share (common/tls_flags.h).
inline constexpr absl::string_view kSharedFlagSources[] = {
    "common/tls_flags.cc"};

// The relative path of a program's flag source, `main_source` (e.g.
// "server/main.cc") or a shared one, that `file` ends with; "" for none.
inline std::string FlagSourceOf(absl::string_view file,
                                absl::string_view main_source) {
  if (absl::EndsWith(file, main_source)) return std::string(main_source);
  for (absl::string_view shared : kSharedFlagSources) {
    if (absl::EndsWith(file, shared)) return std::string(shared);
  }
  return "";
}

// --help and --helpshort list the flags defined in `main_source` and in the
// shared flag sources, with their defaults, under their relative paths;
// --version prints "`program` <project version>".
inline void SetFlagsUsage(absl::string_view program,
                          absl::string_view main_source) {
  absl::FlagsUsageConfig config;
  config.contains_help_flags =
      [source = std::string(main_source)](absl::string_view file) {
        return !FlagSourceOf(file, source).empty();
      };
  config.contains_helpshort_flags = config.contains_help_flags;
  // "Flags from server/main.cc", not from wherever the tree was built.
  config.normalize_filename =
      [source = std::string(main_source)](absl::string_view file) {
        std::string relative = FlagSourceOf(file, source);
        return relative.empty() ? std::string(file) : relative;
      };
  config.version_string = [line = absl::StrCat(program, " ", kReshardVersion,
                                               "\n")] { return line; };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace reshard

#endif  // RESHARD_COMMON_FLAGS_USAGE_H_
