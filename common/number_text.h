// The text form of numbers in Reshard's canonical and JSON outputs.
#ifndef RESHARD_COMMON_NUMBER_TEXT_H_
#define RESHARD_COMMON_NUMBER_TEXT_H_

#include <charconv>
#include <string>

namespace reshard {

// The shortest text that reads back as exactly `value` (std::to_chars):
// "0.1", "87.7", "1e+300"; "inf"/"nan" for non-finite values.
inline std::string ShortestRoundTrip(double value) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
}

}  // namespace reshard

#endif  // RESHARD_COMMON_NUMBER_TEXT_H_
