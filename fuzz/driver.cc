// libFuzzer driver: one binary per target; STRATA_FUZZ_ENTRY names the entry it calls, so the
// binary links only that parser (and its coverage counts only that parser's code).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "entries/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::STRATA_FUZZ_ENTRY(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
