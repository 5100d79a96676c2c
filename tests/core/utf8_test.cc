#include "strata/core/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "strata/core/json_output.h"

namespace strata {
namespace {

// Byte sequences from RFC 3629 and the Unicode standard's table 3-7 (well-formed sequences).
TEST(Utf8, SequenceLengthAcceptsOnlyShortestFormsOfScalarValues) {
  EXPECT_EQ(Utf8SequenceLength("A", 0), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xC3\xA9", 0), 2u);          // U+00E9 e-acute
  EXPECT_EQ(Utf8SequenceLength("\xE2\x82\xAC", 0), 3u);      // U+20AC euro sign
  EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x98\x80", 0), 4u);  // U+1F600
  EXPECT_EQ(Utf8SequenceLength("\xF4\x8F\xBF\xBF", 0), 4u);  // U+10FFFF, the last code point
  EXPECT_EQ(Utf8SequenceLength("\xC0\x80", 0), 0u);          // overlong NUL
  EXPECT_EQ(Utf8SequenceLength("\xE0\x80\xAF", 0), 0u);      // overlong '/'
  EXPECT_EQ(Utf8SequenceLength("\xED\xA0\x80", 0), 0u);      // U+D800, a surrogate
  EXPECT_EQ(Utf8SequenceLength("\xF4\x90\x80\x80", 0), 0u);  // U+110000, past the last
  EXPECT_EQ(Utf8SequenceLength("\x80", 0), 0u);              // a lone continuation byte
  EXPECT_EQ(Utf8SequenceLength("\xE2\x82", 0), 0u);          // truncated at the end
  EXPECT_EQ(Utf8SequenceLength("\xFF", 0), 0u);
}

TEST(Utf8, SanitizeReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(SanitizeUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  // "\xC0 ()" (the py-spy frame that aborted --json): one bad byte, one U+FFFD (EF BF BD).
  EXPECT_EQ(SanitizeUtf8("\xC0 ()"), "\xEF\xBF\xBD ()");
  // An overlong NUL is two bad bytes: two replacements, nothing dropped silently.
  EXPECT_EQ(SanitizeUtf8("a\xC0\x80z"), "a\xEF\xBF\xBD\xEF\xBF\xBDz");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xED\xA0\x80\xF4\x90\x80\x80\xFF")));
}

TEST(Utf8, JsonOutputOfInvalidBytesIsValidJsonNotAnAbort) {
  Json j = JsonDocument("test");
  j["frame"] = "\xC0 ()";
  EXPECT_EQ(
      DumpJson(j),
      "{\n  \"schema_version\": 1,\n  \"kind\": \"test\",\n  \"frame\": \"\xEF\xBF\xBD ()\"\n}\n");
}

// Counted by hand: "ab" is 2 code points in 2 bytes; U+2588 FULL BLOCK is E2 96 88, 1 code
// point in 3 bytes; U+1F600 is F0 9F 98 80, 1 in 4; a stray continuation byte 0x80 is no lead,
// so it adds nothing, and a lone lead byte 0xE2 (a truncated sequence) counts as 1.
TEST(Utf8, CodePointsCountCharactersNotBytes) {
  EXPECT_EQ(Utf8CodePoints(""), 0u);
  EXPECT_EQ(Utf8CodePoints("ab"), 2u);
  EXPECT_EQ(Utf8CodePoints("\xE2\x96\x88\xE2\x96\x88|"), 3u);
  EXPECT_EQ(Utf8CodePoints("\xF0\x9F\x98\x80"), 1u);
  EXPECT_EQ(Utf8CodePoints(std::string_view("a\x80", 2)), 1u);
  EXPECT_EQ(Utf8CodePoints(std::string_view("\xE2z", 2)), 2u);
}

}  // namespace
}  // namespace strata
