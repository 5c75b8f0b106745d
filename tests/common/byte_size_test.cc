// ParseByteSize: the one byte-count form every flag takes (digits, an
// optional binary unit), and what it refuses, quoting the text.
#include "common/byte_size.h"

#include <string>

#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(ByteSizeTest, ReadsCountsWithOptionalBinaryUnits) {
  EXPECT_EQ(*ParseByteSize("0"), 0);
  EXPECT_EQ(*ParseByteSize("65536"), 65536);
  EXPECT_EQ(*ParseByteSize("64KiB"), 64 << 10);
  EXPECT_EQ(*ParseByteSize("1MiB"), 1 << 20);
  EXPECT_EQ(*ParseByteSize("2GiB"), int64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("1TiB"), int64_t{1} << 40);
  EXPECT_EQ(*ParseByteSize("8388607TiB"), int64_t{8388607} << 40);
}

TEST(ByteSizeTest, RefusesAnythingElseQuotingIt) {
  for (const std::string text :
       {"", "x", "-1", "+5", "1.5MiB", "1MB", "1 MiB", "MiB", "1KiBKiB",
        "8388608TiB", "9223372036854775808"}) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(text);
    ASSERT_FALSE(bytes.ok()) << text;
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(bytes.status().message(),
              "\"" + text +
                  "\" is not a byte count >= 0 (with an optional KiB, MiB, "
                  "GiB or TiB)");
  }
}

TEST(ByteSizeTest, FormatsInTheLargestWholeUnitAndReadsBack) {
  EXPECT_EQ(FormatByteSize(16 << 20), "16MiB");
  EXPECT_EQ(FormatByteSize(int64_t{1} << 30), "1GiB");
  EXPECT_EQ(FormatByteSize(1536), "1536");
  EXPECT_EQ(FormatByteSize(3 << 10), "3KiB");
  EXPECT_EQ(FormatByteSize(0), "0");
  for (int64_t bytes : {int64_t{0}, int64_t{1000}, int64_t{65536},
                        int64_t{5} << 40, int64_t{123456789}}) {
    EXPECT_EQ(ParseByteSize(FormatByteSize(bytes)).value(), bytes) << bytes;
  }
}

}  // namespace
}  // namespace reshard
