#include "strata/core/yaml_fields.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(YamlFields, ReadsTypedFieldsWithUnits) {
  auto node = ParseYaml("gpus: 8\nhbm: 96GB\nnic: 400Gb/s\n", "c.yaml");
  ASSERT_TRUE(node.ok());
  auto map = YamlMap::Of(*node, "c.yaml", "");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(*map->PositiveInt("gpus"), 8);
  EXPECT_DOUBLE_EQ(map->Size("hbm")->gb(), 96.0);
  EXPECT_DOUBLE_EQ(map->Bandwidth("nic")->gb_per_s(), 50.0);
  EXPECT_TRUE(map->CheckNoUnknownKeys().ok());
}

TEST(YamlFields, ErrorsNameFileLineAndField) {
  auto node = ParseYaml("node:\n  gpus: eight\n  hbmm: 96GB\n", "c.yaml");
  ASSERT_TRUE(node.ok());
  auto top = YamlMap::Of(*node, "c.yaml", "");
  auto inner = top->Map("node");
  ASSERT_TRUE(inner.ok());
  auto gpus = inner->PositiveInt("gpus");
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.error().Format(), "c.yaml:2: node.gpus: expected an integer, got 'eight'");
  auto hbm = inner->Size("hbm");
  EXPECT_EQ(hbm.error().Format(), "c.yaml:2: node.hbm: missing required field");
  auto unknown = inner->CheckNoUnknownKeys();
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().Format(),
            "c.yaml:3: node.hbmm: unknown field 'hbmm'\n  hint: did you mean 'hbm'?");
}

TEST(YamlFields, EmptyAndMalformed) {
  EXPECT_EQ(ParseYaml("  \n", "e.yaml").error().Format(),
            "e.yaml: the file is empty, expected a YAML mapping");
  auto bad = ParseYaml("a: [1, 2\n", "m.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().file, "m.yaml");
  EXPECT_GT(bad.error().line, 0);
}

// Fuzz finding 14: YAML allows a sequence or a map as a key ("? [a, b]: c"); reading it as a name
// threw yaml-cpp's bad conversion out of every parser that checks for unknown keys.
TEST(YamlFields, AKeyThatIsNotANameIsAnErrorNotAnException) {
  auto node = ParseYaml("gpus: 8\nnode:\n  ? [a, b]\n  : 1\n", "k.yaml");
  ASSERT_TRUE(node.ok());
  auto top = YamlMap::Of(*node, "k.yaml", "");
  ASSERT_TRUE(top.ok());
  auto inner = top->Map("node");
  ASSERT_TRUE(inner.ok());
  const Status s = inner->CheckNoUnknownKeys();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().Format(),
            "k.yaml:3: node: a key that is not a name (a YAML sequence or map used as a key)\n"
            "  hint: keys are plain names, as in the examples under data/");
}

// A key written twice kept the first value silently (yaml-cpp's lookup returns the first pair):
// `parallel: {tp: 2, tp: 4}` ran as TP 2 with no word. Both lines are named.
TEST(YamlFields, AKeyWrittenTwiceIsAnErrorNamingBothLines) {
  struct Case {
    const char* name;
    const char* text;
    const char* expected_error;  // "" when the text must parse
  };
  const Case cases[] = {
      {"top level", "gpus: 8\nhbm: 96GB\ngpus: 4\n",
       "d.yaml:3: key 'gpus' is written twice in one mapping, on line 1 and line 3; YAML readers "
       "keep only one of the values\n  hint: remove one of the two 'gpus' lines"},
      {"nested", "parallel:\n  tp: 2\n  pp: 1\n  tp: 4\n",
       "d.yaml:4: key 'tp' is written twice in one mapping, on line 2 and line 4; YAML readers "
       "keep only one of the values\n  hint: remove one of the two 'tp' lines"},
      {"in a list item", "gpus:\n  - name: a\n    name: b\n",
       "d.yaml:3: key 'name' is written twice in one mapping, on line 2 and line 3; YAML readers "
       "keep only one of the values\n  hint: remove one of the two 'name' lines"},
      {"flow mapping", "parallel: {tp: 2, tp: 4}\n",
       "d.yaml:1: key 'tp' is written twice in one mapping, on line 1 and line 1; YAML readers "
       "keep only one of the values\n  hint: remove one of the two 'tp' lines"},
      // The same key in two different mappings, and an alias repeated, are fine.
      {"same key in sibling maps", "a:\n  tp: 1\nb:\n  tp: 2\n", ""},
      {"alias used twice", "base: &b {tp: 1}\nx: *b\ny: *b\n", ""},
  };
  for (const Case& c : cases) {
    auto node = ParseYaml(c.text, "d.yaml");
    if (std::string(c.expected_error).empty()) {
      EXPECT_TRUE(node.ok()) << c.name << ": " << node.error().Format();
      continue;
    }
    ASSERT_FALSE(node.ok()) << c.name;
    EXPECT_EQ(node.error().Format(), c.expected_error) << c.name;
  }
}

}  // namespace
}  // namespace strata
