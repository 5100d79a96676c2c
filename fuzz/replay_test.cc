// Replays every input kept under fuzz/regressions/<target>/ through the entry its fuzz target
// calls, in the normal build (no clang needed): a finding once fixed stays fixed. An input that
// crashes, aborts on an invariant or throws fails the run; ctest's timeout catches a hang.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "entries/fuzz_entries.h"

namespace strata::fuzz {
namespace {

namespace fs = std::filesystem;

TEST(FuzzRegressions, EveryKeptInputReplaysCleanly) {
  const fs::path root = fs::path(STRATA_FUZZ_DIR) / "regressions";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  size_t replayed = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string name = dir.path().filename().string();
    const Target* target = FindTarget(name);
    ASSERT_NE(target, nullptr) << "regressions/" << name << " names no fuzz target";
    for (const auto& file : fs::directory_iterator(dir.path())) {
      if (!file.is_regular_file() || file.path().extension() == ".md") continue;
      SCOPED_TRACE(file.path().string());
      std::ifstream in(file.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      target->entry(bytes);
      ++replayed;
    }
  }
  // The seven findings of the first fuzzing round each left at least one input.
  EXPECT_GE(replayed, 7u);
}

TEST(FuzzRegressions, EveryTargetHasAUniqueName) {
  for (const Target& t : Targets()) EXPECT_EQ(FindTarget(t.name), &t) << t.name;
}

}  // namespace
}  // namespace strata::fuzz
