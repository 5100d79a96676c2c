#include "strata/hang/analysis/stack_tree.h"

#include <gtest/gtest.h>

namespace strata::hang::stack_tree_test {
namespace {

TEST(FormatRankRanges, Table) {
  struct Case {
    std::vector<int64_t> ranks;
    const char* expected;  // written by hand from the definition: runs joined by '-', ',' between
  };
  const Case cases[] = {
      {{}, ""},
      {{5}, "5"},
      {{0, 1, 2}, "0-2"},
      {{3, 1, 2, 2}, "1-3"},  // unsorted with a duplicate
      {{0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 18, 19, 20,
        21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39},
       "0-16,18-39"},  // the reference incident's 39 waiting ranks
      {{0, 2, 4}, "0,2,4"},
      {{-1, 0}, "-1-0"},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatRankRanges(c.ranks), c.expected);
}

PyFrame F(const char* function, const char* file, int line = 1) {
  PyFrame f;
  f.function = function;
  f.file = file;
  f.line = line;
  return f;
}

TEST(StackTree, TenThousandRanksCollapseIntoGroupsWithTheOddOneNamed) {
  const std::vector<PyFrame> waiting = {F("all_reduce", "c10d.py"), F("step", "optimizer.py"),
                                        F("train_step", "training.py"), F("<module>", "sft.py")};
  const std::vector<PyFrame> teardown = {F("destroy_process_group", "c10d.py"), F("main", "sft.py"),
                                         F("<module>", "sft.py")};
  // Same place, different line: still the same group (lines are not part of the key).
  std::vector<PyFrame> waiting_other_line = waiting;
  waiting_other_line[0].line = 99;
  StackTree tree;
  for (int64_t r = 0; r < 10000; ++r) {
    if (r == 17) {
      tree.Add(r, teardown);
    } else {
      tree.Add(r, r % 2 ? waiting : waiting_other_line);
    }
  }
  const auto classes = tree.Classes();
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].members.size(), 9999u);
  EXPECT_EQ(classes[0].shared_depth, 4u);  // the largest shares its whole stack with itself
  EXPECT_EQ(FormatRankRanges(classes[1].members), "17");
  // Both stacks start at <module> (sft.py) and part right below it: one shared outer frame.
  EXPECT_EQ(classes[1].shared_depth, 1u);
  EXPECT_EQ(classes[1].frames[0].function, "destroy_process_group");
}

TEST(StackTree, TiesAreOrderedBySmallestMember) {
  StackTree tree;
  tree.Add(5, {F("a", "x.py")});
  tree.Add(2, {F("b", "x.py")});
  const auto classes = tree.Classes();
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].members.front(), 2);
  EXPECT_EQ(classes[1].shared_depth, 0u);  // nothing in common
}

}  // namespace
}  // namespace strata::hang::stack_tree_test
