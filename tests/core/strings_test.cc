#include "strata/core/strings.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace strata::strings_test {
namespace {

using namespace std::string_literals;  // "a\0b"s keeps its NUL

TEST(Strings, Contains) {
  EXPECT_TRUE(Contains("NCCL WARN Timeout", "WARN"));
  EXPECT_TRUE(Contains("anything", ""));
  EXPECT_FALSE(Contains("", "x"));
  EXPECT_FALSE(Contains("WAR", "WARN"));
}

// Only A-Z change: digits, separators and UTF-8 bytes ("é" is 0xC3 0xA9, which a locale-aware
// tolower may map) come back as they were, and an empty input stays empty.
TEST(Strings, AsciiLower) {
  EXPECT_EQ(AsciiLower("Interleaved1F1B"), "interleaved1f1b");
  EXPECT_EQ(AsciiLower("expandable_segments:True"), "expandable_segments:true");
  EXPECT_EQ(AsciiLower("Z@[`{"), "z@[`{");  // the bytes on either side of A-Z and a-z stay
  EXPECT_EQ(AsciiLower("Caf\xC3\xA9 \xC3\x89"), "caf\xC3\xA9 \xC3\x89");
  EXPECT_EQ(AsciiLower(""), "");
}

// /proc/<pid>/cmdline and environ: each field ends with a NUL. A read cut at its size limit
// leaves the last field without one; a hostile or odd file may hold empty fields or nothing.
// ECMA-48's shapes, as terminals and `tput` write them: SGR colours, a private parameter ('?'),
// a character-set designation (ESC ( B, which `tput sgr0` writes before ESC [ m), and an escape
// cut off at the end of a pasted line. A line without ESC comes back as itself, not a copy.
TEST(Strings, StripAnsiEscapes) {
  std::string buffer;
  EXPECT_EQ(StripAnsiEscapes("\x1b[31mERROR\x1b[0m x", buffer), "ERROR x");
  EXPECT_EQ(StripAnsiEscapes("\x1b[1;32mok\x1b[m", buffer), "ok");
  EXPECT_EQ(StripAnsiEscapes("\x1b[?25lhidden", buffer), "hidden");
  // A rich logger's 24-bit colour around a Megatron field.
  EXPECT_EQ(StripAnsiEscapes("\x1b[31mstep: 10  \x1b[38;2;180;60;0mgrad_norm: 0.4\x1b[39m", buffer),
            "step: 10  grad_norm: 0.4");
  EXPECT_EQ(StripAnsiEscapes("a\x1b(B\x1b[mb", buffer), "ab");
  EXPECT_EQ(StripAnsiEscapes("rank 3\x1b[3", buffer), "rank 3");
  EXPECT_EQ(StripAnsiEscapes("end\x1b", buffer), "end");
  const std::string_view plain = "no escape here";
  EXPECT_EQ(StripAnsiEscapes(plain, buffer).data(), plain.data());
}

TEST(Strings, SplitNul) {
  struct Case {
    const char* name;
    std::string input;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"cmdline", "python3\0train.py\0--tp\0002\0"s, {"python3", "train.py", "--tp", "2"}},
      {"environ", "RANK=3\0WORLD_SIZE=8\0"s, {"RANK=3", "WORLD_SIZE=8"}},
      {"truncated: the last field has no NUL", "RANK=3\0WORLD_SI"s, {"RANK=3", "WORLD_SI"}},
      {"empty", "", {}},
      {"only NULs", "\0\0\0"s, {}},
      {"empty fields dropped", "\0a\0\0b\0"s, {"a", "b"}},
      {"no NUL at all", "sleep", {"sleep"}},
      {"bytes kept as they are", "\xff\x01=\n\0"s, {"\xff\x01=\n"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(SplitNul(c.input), c.expected);
  }
}

}  // namespace
}  // namespace strata::strings_test
