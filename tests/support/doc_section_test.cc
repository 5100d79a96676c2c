#include "support/doc_section.h"

#include <gtest/gtest.h>

namespace strata::testing {
namespace {

TEST(DocSection, ReplacesFromTheTitleToTheEndMarksLine) {
  // The section's old body and its end line go; what follows the end line stays.
  const std::string doc = "intro\n## T\nold\n<!-- end -->\nafter\n";
  EXPECT_EQ(WithSectionReplaced(doc, "## T", "<!-- end -->", "## T\nnew\n<!-- end -->\n"),
            "intro\n## T\nnew\n<!-- end -->\nafter\n");
}

TEST(DocSection, AnEndMarkWithoutANewlineEndsTheDocument) {
  EXPECT_EQ(WithSectionReplaced("a\n## T\nold\n<!-- end -->", "## T", "<!-- end -->", "## T\nx\n"),
            "a\n## T\nx\n");
}

TEST(DocSection, AMissingMarkIsNoResult) {
  EXPECT_FALSE(WithSectionReplaced("## T\nold\n", "## T", "<!-- end -->", "s").has_value());
  EXPECT_FALSE(WithSectionReplaced("old\n<!-- end -->\n", "## T", "<!-- end -->", "s"));
  // The end mark must come after the title: an earlier one does not count.
  EXPECT_FALSE(WithSectionReplaced("<!-- end -->\n## T\nold\n", "## T", "<!-- end -->", "s"));
}

}  // namespace
}  // namespace strata::testing
