#include "strata/hang/parsers/pickle_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/golden.h"

namespace strata::hang::pickle_reader_test {
namespace {

using nlohmann::json;
using std::string_literals::operator""s;

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// Each pickle is written out opcode by opcode (the Python pickletools names in the comments);
// the expected value is what CPython's pickle.loads returns for the same bytes.
TEST(PickleReader, DecodesTheOpcodesTorchWrites) {
  struct Case {
    const char* name;
    std::string bytes;
    const char* expected_json;
  };
  const Case cases[] = {
      // PROTO 2, BININT1 7, STOP
      {"bininit1", Bytes({0x80, 2, 'K', 7, '.'}), "7"},
      // BININT2 0x0ff6 = 4086 (little-endian f6 0f)
      {"binint2", Bytes({0x80, 2, 'M', 0xf6, 0x0f, '.'}), "4086"},
      // BININT ff ff ff ff = -1 (signed 32-bit)
      {"binint negative", Bytes({0x80, 2, 'J', 0xff, 0xff, 0xff, 0xff, '.'}), "-1"},
      // LONG1 8 bytes 15 cd 55 f5 51 72 86 18 = 0x18867251f555cd15 = 1767225600123456789
      {"long1 ns", Bytes({0x80, 2, 0x8a, 8, 0x15, 0xcd, 0x55, 0xf5, 0x51, 0x72, 0x86, 0x18, '.'}),
       "1767225600123456789"},
      // LONG1 1 byte ff = -1 (two's complement, sign-extended)
      {"long1 negative", Bytes({0x80, 2, 0x8a, 1, 0xff, '.'}), "-1"},
      // LONG1 0 bytes = 0
      {"long1 zero", Bytes({0x80, 2, 0x8a, 0, '.'}), "0"},
      // BINFLOAT big-endian 3ff4000000000000 = 1.25
      {"binfloat", Bytes({0x80, 2, 'G', 0x3f, 0xf4, 0, 0, 0, 0, 0, 0, '.'}), "1.25"},
      {"none true false", Bytes({0x80, 2, '(', 'N', 0x88, 0x89, 't', '.'}), "[null,true,false]"},
      // EMPTY_DICT MARK BINUNICODE 'a' BINPUT 0 BINGET 0 SETITEMS: a memoized key reused as value
      {"memo string reuse",
       Bytes({0x80, 2, '}', '(', 'X', 1, 0, 0, 0, 'a', 'q', 0, 'h', 0, 'u', '.'}), R"({"a":"a"})"},
      // Python order: EMPTY_LIST BINPUT 0 MARK K1 APPENDS, then the memo sees the filled list.
      {"memo before fill", Bytes({0x80, 2, '(', ']', 'q', 0, '(', 'K', 1, 'e', 'h', 0, 't', '.'}),
       "[[1],[1]]"},
      {"tuple1 2 3 empty", Bytes({0x80, 2, 'K', 1, 0x85, 'K', 1, 'K', 2, 0x86, ')', 0x87, '.'}),
       "[[1],[1,2],[]]"},
      {"setitem append", Bytes({0x80, 2, '}', 'X', 1, 0, 0, 0, 'k', ']', 'K', 3, 'a', 's', '.'}),
       R"({"k":[3]})"},
      // integer dict keys become their decimal text
      {"int key", Bytes({0x80, 2, '}', 'K', 5, 'K', 6, 's', '.'}), R"({"5":6})"},
      // protocol 4: FRAME, SHORT_BINUNICODE, MEMOIZE, LONG_BINGET
      {"protocol 4", Bytes({0x80, 4,   0x95, 5,    0,   0,   0, 0, 0, 0, 0,   0x8c,
                            2,    'h', 'i',  0x94, '(', 'j', 0, 0, 0, 0, 'l', '.'}),
       R"(["hi"])"},
      // restore_type_tag(x, "T") is read as x
      {"type tag",
       "\x80\x02"
       "ctorch.jit._pickle\nrestore_type_tag\n"
       "K\x09"
       "X\x01\x00\x00\x00T"
       "\x86R."s,
       "9"},
      {"dup pop pop_mark", Bytes({0x80, 2, 'K', 1, '2', '0', '(', 'K', 2, '1', '.'}), "1"},
  };
  for (const Case& c : cases) {
    const auto value = ReadPickle(c.bytes, "p");
    ASSERT_TRUE(value.ok()) << c.name << ": " << value.error().Format();
    EXPECT_EQ(json::parse(*value), json::parse(c.expected_json)) << c.name;
  }
}

// The full error text is asserted: file, byte offset of the offending opcode, what was expected.
TEST(PickleReader, RefusesHostileAndBrokenInput) {
  struct Case {
    const char* name;
    std::string bytes;
    const char* error;
  };
  const std::string plain =
      "expected only dicts, lists, tuples, strings, numbers, booleans and None (a pickle that "
      "names a Python object could run code when loaded, so strata never builds one)";
  const Case cases[] = {
      {"empty", "", "p: the file is empty, expected a pickle"},
      {"no stop", Bytes({0x80, 2, 'K', 1}),
       "p: byte 4: the pickle ends without its STOP opcode ('.'): the file is truncated"},
      {"protocol 1", Bytes({0x80, 1, '.'}),
       "p: byte 0: pickle protocol 1, expected 2 (torch) to 5"},
      {"huge length", Bytes({0x80, 2, 'X', 0xff, 0xff, 0xff, 0xff, 'a', '.'}),
       "p: byte 2: BINUNICODE (0x58) announces a string of 4294967295 bytes but only 2 bytes "
       "follow: the file is truncated or corrupt"},
      {"short length field", Bytes({0x80, 2, 'X', 1}),
       "p: byte 2: BINUNICODE (0x58) needs 4 bytes of length but the file ends after 1: the file "
       "is truncated"},
      {"memo miss", Bytes({0x80, 2, 'h', 9, '.'}),
       "p: byte 2: BINGET (0x68) refers to memo entry 9, which was never stored: the pickle is "
       "corrupt"},
      {"not an opcode", Bytes({0x80, 2, 0xff, '.'}),
       "p: byte 2: 0xff is not a pickle opcode: the file is corrupt or not a pickle"},
      {"build", Bytes({0x80, 2, '}', '}', 'b', '.'}),
       "p: byte 4: opcode BUILD (0x62) is not accepted; "},
      {"inst", Bytes({0x80, 2, 'i', '.'}), "p: byte 2: opcode INST (0x69) is not accepted; "},
      {"global",
       "\x80\x02"
       "cos\nsystem\n"
       "X\x01\x00\x00\x00x\x85R."s,
       "p: byte 2: GLOBAL (0x63) imports 'os.system'; "},
      {"global without newline",
       "\x80\x02"
       "cos",
       "p: byte 2: GLOBAL (0x63) expected 'module\\nname\\n' within 256 bytes"},
      {"underflow", Bytes({0x80, 2, 'u', '.'}),
       "p: byte 2: SETITEMS (0x75) expected a MARK ('(') before it, found none: the pickle is "
       "malformed"},
      {"tuple2 underflow", Bytes({0x80, 2, 'K', 1, 0x86, '.'}),
       "p: byte 4: TUPLE2 (0x86) needs 2 values on the stack, found 1"},
      {"odd setitems", Bytes({0x80, 2, '}', '(', 'K', 1, 'u', '.'}),
       "p: byte 6: SETITEMS (0x75) found 1 values, expected key/value pairs"},
      {"float key", Bytes({0x80, 2, '}', 'N', 'K', 1, 's', '.'}),
       "p: byte 6: SETITEM (0x73) has a dict key that is not a string or an integer"},
      {"long1 9 bytes", Bytes({0x80, 2, 0x8a, 9, '.'}),
       "p: byte 2: LONG1 (0x8a) holds an integer of 9 bytes, expected at most 8 (a 64-bit "
       "integer)"},
      {"long4 negative length", Bytes({0x80, 2, 0x8b, 0xff, 0xff, 0xff, 0xff, '.'}),
       "p: byte 2: LONG4 (0x8b) holds an integer of 4294967295 bytes, expected at most 8 (a "
       "64-bit integer)"},
      {"bad utf8", Bytes({0x80, 2, 'X', 2, 0, 0, 0, 0xc3, 0x28, '.'}),
       "p: byte 2: BINUNICODE (0x58) holds a string that is not valid UTF-8"},
      // EMPTY_LIST BINPUT 0 BINGET 0 APPEND: a list that contains itself
      {"cycle", Bytes({0x80, 2, ']', 'q', 0, 'h', 0, 'a', '.'}),
       "p: byte 8: values nested deeper than 100 levels (or a container that contains itself)"},
      {"stop on empty stack", Bytes({0x80, 2, '.'}), "p: byte 2: STOP (0x2e) with an empty stack"},
  };
  for (const Case& c : cases) {
    const auto value = ReadPickle(c.bytes, "p");
    ASSERT_FALSE(value.ok()) << c.name;
    const std::string text = value.error().Format();
    std::string expected = c.error;
    if (expected.ends_with("; ")) expected += plain;
    EXPECT_EQ(text, expected) << c.name;
  }
}

TEST(PickleReader, LimitsBoundWorkAndMemory) {
  // 30 doublings of one list through the memo: 2^30 values if expanded. The value limit stops
  // the expansion long before; the decoder itself holds only 31 small nodes. The error points at
  // STOP, where the value is built: 2 (PROTO) + 3 (EMPTY_LIST, BINPUT) + 30 * 8 = byte 245.
  std::string laughs = Bytes({0x80, 2, ']', 'q', 0});
  for (int k = 0; k < 30; ++k) {
    laughs += Bytes({'(', 'h', k, 'h', k, 'l', 'q', k + 1});
  }
  laughs += ".";
  PickleLimits limits;
  limits.max_values = 1000;
  const auto value = ReadPickle(laughs, "p", limits);
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().Format(),
            "p: byte 245: the decoded value has more than 1000 elements "
            "(shared values count each time they are used)");

  limits = PickleLimits{};
  limits.max_input_bytes = 4;
  EXPECT_EQ(ReadPickle(Bytes({0x80, 2, 'K', 1, '.'}), "p", limits).error().Format(),
            "p: the pickle is 5 bytes, over the limit of 4 bytes");

  limits = PickleLimits{};
  limits.max_depth = 3;
  // MARK MARK MARK MARK: the fourth MARK exceeds a nesting of 3
  EXPECT_EQ(ReadPickle(Bytes({0x80, 2, '(', '(', '(', '(', '.'}), "p", limits).error().Format(),
            "p: byte 5: MARKs nested deeper than 3 levels");
}

// The reader's header exposes no JSON library type: a third of the library once compiled
// nlohmann/json.hpp through headers like this one.
TEST(PickleReader, HeaderPullsInNoJsonLibrary) {
  std::ifstream in(strata::testing::TestPath("../src/strata/hang/parsers/pickle_reader.h"));
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  EXPECT_EQ(text.str().find("nlohmann"), std::string::npos);
}

TEST(PickleReader, OpcodeNames) {
  EXPECT_EQ(PickleOpcodeName('c'), "GLOBAL");
  EXPECT_EQ(PickleOpcodeName('R'), "REDUCE");
  EXPECT_EQ(PickleOpcodeName(0x93), "STACK_GLOBAL");
  EXPECT_EQ(PickleOpcodeName(0xff), "");
}

}  // namespace
}  // namespace strata::hang::pickle_reader_test
