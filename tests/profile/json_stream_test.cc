// The streaming JSON reader: tokens in order (strings across chunk boundaries and with escapes,
// integers and floats), and every grammar error with its byte and what was expected.
#include "strata/profile/json_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace strata::profile {
namespace {

// Records the tokens as text: {, }, [, ], k:<key>, s:<string>, i:<int>, f:<float>, l.
class Recorder : public JsonHandler {
 public:
  std::string out;
  void StartObject() override { out += "{ "; }
  void EndObject() override { out += "} "; }
  void StartArray() override { out += "[ "; }
  void EndArray() override { out += "] "; }
  void Key(std::string_view k) override { out += "k:" + std::string(k) + " "; }
  void String(std::string_view v) override { out += "s:" + std::string(v) + " "; }
  void Integer(int64_t v) override { out += "i:" + std::to_string(v) + " "; }
  void Float(double v) override { out += "f:" + std::to_string(v) + " "; }
  void Literal() override { out += "l "; }
};

// Hands out the text `chunk` bytes at a time, so every token crosses a chunk boundary somewhere.
struct ReadOutcome {
  std::string tokens;
  std::string error;
};
ReadOutcome Read(const std::string& text, size_t chunk) {
  size_t at = 0;
  const ChunkReader read = [&](char* buffer, size_t capacity) -> int64_t {
    const size_t n = std::min({chunk, capacity, text.size() - at});
    std::memcpy(buffer, text.data() + at, n);
    at += n;
    return static_cast<int64_t>(n);
  };
  Recorder recorder;
  auto error = ReadJsonStream(read, recorder, 4);
  ReadOutcome r;
  r.tokens = recorder.out;
  if (error) {
    r.error = "byte " + std::to_string(error->byte) + (error->at_end ? " (end): " : ": ") +
              error->message;
  }
  return r;
}

TEST(JsonStream, TokensInOrderWhateverTheChunkSize) {
  const std::string text =
      R"j({"name": "void a<int>(b*)", "ts": 1623142623460172, "dur": 2.25, "esc": "q\"\\\n\u00e9",)j"
      R"j( "grid": [8, 1, -1], "neg": -1.5e3, "ok": true, "none": null, "big": 99999999999999999999})j";
  const std::string expected =
      "{ k:name s:void a<int>(b*) k:ts i:1623142623460172 k:dur f:2.250000 k:esc s:q\"\\\n\xc3\xa9 "
      "k:grid [ i:8 i:1 i:-1 ] k:neg f:-1500.000000 k:ok l k:none l k:big "
      "f:100000000000000000000.000000 } ";
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, size_t{4096}}) {
    SCOPED_TRACE(chunk);
    const ReadOutcome r = Read(text, chunk);
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.tokens, expected);
  }
}

TEST(JsonStream, ErrorsNameTheByteAndWhatWasExpected) {
  const struct {
    const char* name;
    const char* text;
    const char* error;
  } cases[] = {
      {"cut in a string", R"({"name": "ncclKer)", "byte 17 (end): the input ends inside a string"},
      {"cut after a comma", R"([1, 2,)",
       "byte 6 (end): expected a value (object, array, string, number, true, false or null), "
       "found the end of the input"},
      {"missing comma", R"({"a": 1 "b": 2})",
       "byte 8: expected ',' or '}' after an object member, found '\"'"},
      {"missing colon", R"({"a" 1})", "byte 5: expected ':' after a key, found '1'"},
      {"unquoted key", R"({a: 1})", "byte 1: expected a key in quotes, found 'a'"},
      {"bad literal", R"([tru])", "byte 4: expected 'true', found ']'"},
      {"bad number", R"([-])", "byte 2: '-' is not a number"},
      {"bad escape", R"(["a\x"])",
       "byte 4: expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found 'x'"},
      // A control character is refused where the string is read byte by byte (an escape in it).
      {"control character", "[\"\\n\tb\"]", "byte 4: control character byte 0x09 inside a string"},
      {"two documents", R"({} {})", "byte 3: expected nothing after the document, found '{'"},
      {"too deep", "[[[[[1]]]]]", "byte 4: nesting deeper than 4 levels"},
      {"binary", "\x1f\x8b\x08",
       "byte 0: expected a value (object, array, string, number, true, "
       "false or null), found byte 0x1f"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Read(c.text, 3).error, c.error);
  }
}

}  // namespace
}  // namespace strata::profile
