// The readers' shared field errors: each names the path to the value and
// says what is wrong in the same words for every document.
#include "common/json_fields.h"

#include "gtest/gtest.h"

namespace reshard {
namespace {

JsonValue Parse(const char* text) { return *JsonValue::Parse(text); }

TEST(JsonFieldsTest, RequiredMembersNameTheirPath) {
  const JsonValue doc = Parse(R"({"a": {"b": 3, "n": null}, "s": "x"})");
  EXPECT_EQ((*RequiredMember(doc, "s", ""))->string(), "x");
  EXPECT_EQ(RequiredMember(doc, "t", "").status().message(), "t: is required");
  const JsonValue& a = *doc.Find("a");
  EXPECT_EQ(RequiredMember(a, "n", "a").status().message(), "a.n: is required");
  EXPECT_EQ(
      (*RequiredMemberOf(a, "b", "a", JsonValue::Kind::kNumber))->number(), 3);
  const absl::Status wrong =
      RequiredMemberOf(a, "b", "a", JsonValue::Kind::kArray).status();
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.message(), "a.b: not an array");
  EXPECT_EQ(RequiredMemberOf(doc, "s", "", JsonValue::Kind::kObject)
                .status()
                .message(),
            "s: not an object");
}

TEST(JsonFieldsTest, ArraysOfIntsAndStrings) {
  EXPECT_EQ(*JsonInts(Parse("[1, 2, -3]"), "x"),
            (std::vector<int64_t>{1, 2, -3}));
  EXPECT_EQ(JsonInts(Parse("[1, 2.5]"), "x").status().message(),
            "x[1]: not an integer");
  EXPECT_EQ(JsonInts(Parse("{}"), "x").status().message(), "x: not an array");
  EXPECT_EQ(*JsonStrings(Parse(R"(["a", "b"])"), "y"),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(JsonStrings(Parse(R"(["a", 1])"), "y").status().message(),
            "y[1]: not a string");
}

}  // namespace
}  // namespace reshard
