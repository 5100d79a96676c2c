// The output flags are declared in one place (cli/cli_common.cc, AddOutputOptions), so that
// --json, --explain, -o and --svg mean the same thing, in the same words, in every command. A
// command file that declares one of them again fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "support/golden.h"

namespace strata {
namespace {

TEST(OutputFlags, DeclaredOnlyInCliCommon) {
  const std::filesystem::path cli = testing::TestPath("../src/strata/cli");
  ASSERT_TRUE(std::filesystem::is_directory(cli)) << cli;
  // A declaration: add_flag( or add_option( and one of the names, across line breaks too.
  static const std::regex kDeclaration(
      R"re(add_(flag|option)\(\s*[A-Za-z_.>-]*\s*"(--json|--explain|-o,--output|-o|--output|--svg)")re");
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cli)) {
    if (entry.path().extension() != ".cc" || entry.path().filename() == "cli_common.cc") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    std::smatch m;
    const std::string body = text.str();
    EXPECT_FALSE(std::regex_search(body, m, kDeclaration))
        << entry.path().filename() << " declares " << m.str(2)
        << " itself: use AddOutputOptions (cli/cli_common.h)";
  }
  EXPECT_GT(files, 10u);  // the commands were found
}

}  // namespace
}  // namespace strata
