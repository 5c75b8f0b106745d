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

// --help and --helpshort list the flags defined in the source file whose
// path ends with `main_source` (e.g. "server/main.cc"), with their
// defaults, under that relative path; --version prints "`program` <project
// version>".
inline void SetFlagsUsage(absl::string_view program,
                          absl::string_view main_source) {
  absl::FlagsUsageConfig config;
  config.contains_help_flags =
      [source = std::string(main_source)](absl::string_view file) {
        return absl::EndsWith(file, source);
      };
  config.contains_helpshort_flags = config.contains_help_flags;
  // "Flags from server/main.cc", not from wherever the tree was built.
  config.normalize_filename =
      [source = std::string(main_source)](absl::string_view file) {
        return absl::EndsWith(file, source) ? source : std::string(file);
      };
  config.version_string = [line = absl::StrCat(program, " ", kReshardVersion,
                                               "\n")] { return line; };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace reshard

#endif  // RESHARD_COMMON_FLAGS_USAGE_H_
