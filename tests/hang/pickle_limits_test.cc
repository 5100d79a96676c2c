// The unpickler's byte budget (fuzzing round one, findings 4 and 5): shared values are counted at
// every use, and the decoded size is measured before any JSON is built.
#include <gtest/gtest.h>

#include <string>

#include "strata/hang/parsers/pickle_reader.h"

namespace strata::hang {
namespace {

// A 2-byte PROTO 2 header, a string of `length` bytes memoized as 0, then `levels` lists that
// each hold the previous level twice (MARK BINGET k BINGET k LIST BINPUT k+1), then STOP.
std::string DoublingPickle(size_t length, int levels) {
  std::string p = "\x80\x02X";
  for (int i = 0; i < 4; ++i) p += static_cast<char>((length >> (8 * i)) & 0xFF);
  p += std::string(length, 'a') + std::string("q\x00", 2);
  for (int k = 0; k < levels; ++k) {
    p += std::string{'(', 'h', static_cast<char>(k),    'h', static_cast<char>(k),
                     'l', 'q', static_cast<char>(k + 1)};
  }
  return p + ".";
}

TEST(PickleByteLimit, SharedStringIsCountedEachTimeItIsUsed) {
  // 16 KiB reused 2^13 times: 8192 * (16384 + 16) bytes of strings plus 2^13 - 1 lists of 16
  // bytes = 134,479,856 bytes, over the budget of 16,498 * 64 = 1,055,872 bytes (above the 1 MiB
  // floor). Before the byte limit the decoder built all 128 MiB.
  const std::string pickle = DoublingPickle(16384, 13);
  ASSERT_EQ(pickle.size(), 16498u);
  const auto r = ReadPickle(pickle, "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "byte 16497: the decoded value would take 134479856 bytes, over the limit of 1055872 "
            "bytes (64 times the pickle's size, at least 1048576, at most 536870912; shared "
            "strings count each time they are used)");
  // Two levels (4 uses, 65,648 bytes) are well inside the budget and decode.
  const auto small = ReadPickle(DoublingPickle(16384, 2), "p");
  ASSERT_TRUE(small.ok()) << small.error().Format();
  // ReadPickle returns JSON text: the decoded list holds the 16 KiB string, quoted.
  EXPECT_NE(small->find(std::string(16384, 'a')), std::string::npos);
}

TEST(PickleByteLimit, BillionLaughsUnderTheValueLimitIsRefusedByBytes) {
  // 22 doublings of an empty list: 2^23 - 1 = 8,388,607 values, one under the 8 Mi value limit,
  // from 182 bytes. At 16 bytes a value that is 134,217,712 bytes, over the 1 MiB floor.
  std::string p = std::string("\x80\x02]q\x00", 5);
  for (int k = 0; k < 22; ++k) {
    p += std::string{'(', 'h', static_cast<char>(k),    'h', static_cast<char>(k),
                     'l', 'q', static_cast<char>(k + 1)};
  }
  p += ".";
  ASSERT_EQ(p.size(), 182u);
  const auto r = ReadPickle(p, "p");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("would take 134217712 bytes, over the limit of 1048576"),
            std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace strata::hang
