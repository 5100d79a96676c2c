// The examples in the README and the command pages (docs/commands/*.md) are the binary's output,
// not pasted text: each block opened by a line `<!-- example: strata ARGS -->` holds "$ strata
// ARGS" and the standard output of that command, and this test runs it and compares. An example
// therefore cannot drift from the binary: a change to a command's output fails here until
// `UPDATE_GOLDEN=1` rewrites the pages (reviewers read the diff, as with every golden).
// Arguments that name files under the checkout (tests/..., data/...) are run from the checkout's
// root: the checkout's absolute path is taken out of the output again.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/golden.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMarker = "<!-- example: strata ";
constexpr std::string_view kMarkerEnd = " -->";

std::string CheckoutRoot() {
  // TestPath("x") is <root>/tests/x.
  const std::string tests = testing::TestPath("x");
  return fs::path(tests).parent_path().parent_path().string();
}

std::vector<std::string> SplitArgs(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) out.push_back(word);
  return out;
}

// "$ strata ARGS" and the command's stdout, with the checkout's path taken out.
std::string ExampleOutput(const std::string& args_line) {
  const std::string root = CheckoutRoot();
  std::vector<std::string> args = SplitArgs(args_line);
  for (std::string& a : args) {
    if (a.starts_with("tests/") || a.starts_with("data/")) a = root + "/" + a;
  }
  std::string out = testing::RunCli(args).out;
  const std::string prefix = root + "/";
  for (size_t at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at)) {
    out.erase(at, prefix.size());
  }
  return "$ strata " + args_line + "\n" + out;
}

struct Page {
  std::string path;
  std::string text;
};

Page ReadPage(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return {path.string(), buffer.str()};
}

// The README's screen of the reference case and every command page.
std::vector<Page> CommandPages() {
  std::vector<Page> pages{ReadPage(fs::path(CheckoutRoot()) / "README.md")};
  const fs::path dir = fs::path(CheckoutRoot()) / "docs" / "commands";
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".md") pages.push_back(ReadPage(entry.path()));
  }
  return pages;
}

TEST(DocsExamples, EveryExampleIsTheBinarysOutput) {
  const bool update = std::getenv("UPDATE_GOLDEN") != nullptr;
  int examples = 0;
  for (Page& page : CommandPages()) {
    SCOPED_TRACE(page.path);
    std::string rewritten;
    size_t done = 0;
    for (size_t at = page.text.find(kMarker); at != std::string::npos;
         at = page.text.find(kMarker, at + 1)) {
      const size_t end = page.text.find(kMarkerEnd, at);
      ASSERT_NE(end, std::string::npos) << "unterminated example marker";
      const std::string args = page.text.substr(at + kMarker.size(), end - at - kMarker.size());
      // The next line opens the block: ``` with an optional language (```text, ```console).
      const size_t open = end + kMarkerEnd.size();
      ASSERT_EQ(page.text.compare(open, 4, "\n```"), 0)
          << args << ": the marker must precede a ``` block";
      const size_t body = page.text.find('\n', open + 4) + 1;
      const size_t close = page.text.find("```\n", body);
      ASSERT_NE(close, std::string::npos) << args << ": the block is not closed";
      const std::string expected = page.text.substr(body, close - body);
      const std::string actual = ExampleOutput(args);
      ++examples;
      if (update) {
        rewritten += page.text.substr(done, body - done) + actual;
        done = close;
        continue;
      }
      EXPECT_EQ(actual, expected) << "strata " << args
                                  << ": the page's example differs from the binary's output; "
                                     "UPDATE_GOLDEN=1 rewrites it";
    }
    if (update && done > 0) {
      rewritten += page.text.substr(done);
      std::ofstream(page.path) << rewritten;
    }
  }
  // The README (step) and the pages of mfu, memory, map, step, plan (4), compare (2),
  // checkpoint and model (3) carry 16 examples.
  EXPECT_GE(examples, 16);
}

}  // namespace
}  // namespace strata
