// The edit form of a golden case (support/golden_edit.h): each edit on a small input whose result
// is written out by hand, each malformed edit file and each edit that does not apply refused with
// the edit file and its line named, and a case on disk that does not apply failing the test
// rather than running the unedited input.
#include "support/golden_edit.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/golden.h"

namespace strata::testing::golden_edit_test {
namespace {

namespace fs = std::filesystem;

// Four lines, the second with a continuation and leading spaces, no newline at the end (as
// verl's run_qwen2_5-7b_math.sh ends).
constexpr const char* kBase = "python3 -m main \\\n    a=1 \\\n    b=2 \\\n    c=3";

struct ApplyCase {
  const char* name;
  const char* edits;
  const char* expected;  // kBase edited by hand
};

TEST(GoldenEditTest, EditsApplyInOrder) {
  const ApplyCase kCases[] = {
      {"replace keeps the leading spaces after '| '",
       "from | x.sh\nreplace |     a=1 \\\nwith    |     a=2 \\\n",
       "python3 -m main \\\n    a=2 \\\n    b=2 \\\n    c=3"},
      {"delete", "from | x.sh\n# a comment\n\ndelete |     b=2 \\\n",
       "python3 -m main \\\n    a=1 \\\n    c=3"},
      {"insert after, two lines",
       "from | x.sh\nafter |     a=1 \\\ninsert |     x=1 \\\ninsert | y\n",
       "python3 -m main \\\n    a=1 \\\n    x=1 \\\ny\n    b=2 \\\n    c=3"},
      // The cut file ends with its last line's newline, as a file written up to there does.
      {"end after", "from | x.sh\nend after |     a=1 \\\n", "python3 -m main \\\n    a=1 \\\n"},
      // The second edit names the line the first wrote.
      {"edits see the previous ones' text",
       "from | x.sh\nreplace |     a=1 \\\nwith |     a=9 \\\ndelete |     a=9 \\\n",
       "python3 -m main \\\n    b=2 \\\n    c=3"},
  };
  for (const ApplyCase& c : kCases) {
    const LineEdits edits = ParseLineEdits(c.edits, "case/edit");
    ASSERT_EQ(edits.error, "") << c.name;
    EXPECT_EQ(edits.from, "x.sh") << c.name;
    const EditedText r = ApplyLineEdits(edits, "case/edit", kBase, "x.sh");
    EXPECT_EQ(r.error, "") << c.name;
    EXPECT_EQ(r.text, c.expected) << c.name;
  }
}

struct ErrorCase {
  const char* name;
  const char* edits;
  const char* expected_error;
};

TEST(GoldenEditTest, AnEditThatDoesNotApplyNamesTheFileAndLine) {
  const ErrorCase kCases[] = {
      // The line as written in the input has four leading spaces; this one has three.
      {"line not found", "from | x.sh\nreplace |    a=1 \\\nwith | a=2\n",
       "case/edit:2: the line '   a=1 \\' is not in x.sh (the edits before it applied)"},
      {"found only before an earlier edit removed it",
       "from | x.sh\ndelete |     a=1 \\\n# again\nafter |     a=1 \\\ninsert | z\n",
       "case/edit:4: the line '    a=1 \\' is not in x.sh (the edits before it applied)"},
      {"a line that stands twice", "from | x.sh\nafter | c\ninsert | c\ndelete | c\n",
       "case/edit:4: the line 'c' stands 2 times in x.sh (lines 5, 6): name a line that stands "
       "once (the edits before it applied)"},
  };
  for (const ErrorCase& c : kCases) {
    // The third case's first edit applies to a line 'c' kBase lacks: give it one.
    const std::string base = std::string(kBase) + "\nc";
    const LineEdits edits = ParseLineEdits(c.edits, "case/edit");
    ASSERT_EQ(edits.error, "") << c.name;
    const EditedText r = ApplyLineEdits(edits, "case/edit", base, "x.sh");
    EXPECT_EQ(r.error, c.expected_error) << c.name;
    EXPECT_EQ(r.text, "") << c.name;
  }
}

TEST(GoldenEditTest, AMalformedEditFileIsRefused) {
  const ErrorCase kCases[] = {
      {"no from", "replace | a\nwith | b\n",
       "case/edit:1: 'replace' before 'from | <the input edited>'"},
      {"as after an edit", "from | x.sh\ndelete | a\nas | y.sh\n",
       "case/edit:3: 'as' after an edit: name the file before the edits"},
      {"two names", "from | x.sh\nas | y.sh\nas | z.sh\n",
       "case/edit:3: a second 'as': the edited input has one name"},
      {"as a path", "from | x.sh\nas | ../y.sh\n",
       "case/edit:2: 'as' takes a file name (no '/'), got '../y.sh'"},
      {"no bar", "from | x.sh\nreplace a=1\n",
       "case/edit:2: expected '<keyword> | <line>', got 'replace a=1'"},
      {"unknown keyword", "from | x.sh\nsubstitute | a\n",
       "case/edit:2: unknown keyword 'substitute' (from, as, replace, with, delete, after, insert, "
       "end after)"},
      {"replace without with", "from | x.sh\nreplace | a\ndelete | b\n",
       "case/edit:3: 'delete' after 'replace' (line 2): expected 'with | <new line>'"},
      {"with alone", "from | x.sh\nwith | a\n",
       "case/edit:2: 'with' must follow 'replace | <line>'"},
      {"insert without after", "from | x.sh\ndelete | a\ninsert | b\n",
       "case/edit:3: 'insert' must follow 'after | <line>' (or another 'insert')"},
      {"after without insert", "from | x.sh\nafter | a\ndelete | b\n",
       "case/edit:3: 'after' (line 2) is not followed by 'insert | <new line>'"},
      {"replace last", "from | x.sh\nreplace | a\n",
       "case/edit:2: 'replace' is the last line: the new line is missing"},
      {"two inputs", "from | x.sh\nfrom | y.sh\n",
       "case/edit:2: a second 'from': an edit file edits one input"},
  };
  for (const ErrorCase& c : kCases) {
    EXPECT_EQ(ParseLineEdits(c.edits, "case/edit").error, c.expected_error) << c.name;
    // Nothing is applied from a malformed file.
    const EditedText r =
        ApplyLineEdits(ParseLineEdits(c.edits, "case/edit"), "case/edit", kBase, "x.sh");
    EXPECT_EQ(r.error, c.expected_error) << c.name;
  }
}

// A case directory written to a temporary folder, its edit naming a public script of the goldens.
class TempCase {
 public:
  explicit TempCase(const std::string& edit) {
    std::string tmpl = (fs::temp_directory_path() / "strata_edit_test_XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/bad_case";
    fs::create_directories(dir_);
    std::ofstream(dir_ + "/edit") << edit;
  }
  ~TempCase() { fs::remove_all(root_); }
  const std::string& dir() const { return dir_; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ + "/" + name) << text;
  }

 private:
  std::string root_;
  std::string dir_;
};

const std::string kScript =
    TestPath("golden/cli_import/verl_rl_grpo_qwen2_5_7b_fsdp/run_qwen2_5-7b_math.sh");

TEST(GoldenEditTest, ACaseWhoseEditDoesNotApplyFailsAndIsNotRun) {
  // rollout.name is 'vllm' in the script: 'sglang' is not a line of it.
  const TempCase bad("from | " + kScript +
                     "\nreplace |     actor_rollout_ref.rollout.name=sglang \\\n" +
                     "with |     actor_rollout_ref.rollout.name=vlm \\\n");
  std::string path = "unset";
  EXPECT_NONFATAL_FAILURE(
      {
        const EditedInput input(bad.dir());
        path = input.path();
      },
      bad.dir() + "/edit:2: the line '    actor_rollout_ref.rollout.name=sglang \\' is not in " +
          kScript + " (the edits before it applied); the case is not run");
  EXPECT_EQ(path, "");  // nothing to run
}

TEST(GoldenEditTest, TheEditedInputIsWrittenOutsideTheTreeUnderTheCaseName) {
  const TempCase ok("from | " + kScript +
                    "\nreplace |     actor_rollout_ref.rollout.name=vllm \\\n" +
                    "with |     actor_rollout_ref.rollout.name=vlm \\\n");
  std::string dir;
  {
    const EditedInput input(ok.dir());
    ASSERT_NE(input.path(), "");
    dir = input.dir();
    EXPECT_TRUE(input.path().ends_with("/bad_case/run_qwen2_5-7b_math.sh")) << input.path();
    EXPECT_FALSE(input.path().starts_with(TestPath(""))) << input.path();
    std::ifstream in(input.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // The script's line 36 (verl_rl_unknown_engine's error points there) now reads 'vlm'.
    EXPECT_NE(text.find("\n    actor_rollout_ref.rollout.name=vlm \\\n"), std::string::npos);
    EXPECT_EQ(text.find("rollout.name=vllm"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(dir)) << "the temporary folder is removed";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(GoldenEditTest, AnInputWithNoEditIsCopiedAloneUnderItsNameOrAs) {
  // No edit: the script byte for byte, with none of the folder it came from beside it.
  const TempCase copy("from | " + kScript + "\n");
  {
    const EditedInput input(copy.dir());
    ASSERT_NE(input.path(), "");
    EXPECT_TRUE(input.path().ends_with("/bad_case/run_qwen2_5-7b_math.sh")) << input.path();
    EXPECT_EQ(Slurp(input.path()), Slurp(kScript));
    EXPECT_EQ(std::distance(fs::directory_iterator(input.dir()), fs::directory_iterator()), 1);
  }
  // `as` names the written file; the edits apply as before: the script cut after its line 1,
  // "set -x", which keeps its newline.
  const TempCase renamed("from | " + kScript + "\nas | run.sh\nend after | set -x\n");
  const EditedInput input(renamed.dir());
  ASSERT_NE(input.path(), "");
  EXPECT_TRUE(input.path().ends_with("/bad_case/run.sh")) << input.path();
  EXPECT_EQ(Slurp(input.path()), "set -x\n");
  EXPECT_TRUE(Slurp(kScript).starts_with("set -x\n\n"));
}

TEST(GoldenEditTest, TheCasesOwnFilesStandBesideTheEditedInput) {
  const TempCase beside("from | " + kScript + "\n");
  beside.Write("args", "import\n{edited}\n");
  beside.Write("expected.out", "out\n");
  beside.Write("CONFIG.sh", "NNODES=2\n");
  {
    const EditedInput input(beside.dir());
    ASSERT_NE(input.path(), "");
    EXPECT_EQ(Slurp(input.dir() + "/CONFIG.sh"), "NNODES=2\n");
    // The case's own args, expected output and edit are not inputs: not copied.
    EXPECT_FALSE(fs::exists(input.dir() + "/args"));
    EXPECT_FALSE(fs::exists(input.dir() + "/expected.out"));
    EXPECT_FALSE(fs::exists(input.dir() + "/edit"));
    const CaseInput config(beside.dir(), "CONFIG.sh");
    EXPECT_EQ(Slurp(config.path()), "NNODES=2\n");
    EXPECT_NE(config.path(), beside.dir() + "/CONFIG.sh");
  }
  // A file of the case under the edited input's own name: which one is run would be unclear.
  beside.Write("run_qwen2_5-7b_math.sh", "echo\n");
  EXPECT_NONFATAL_FAILURE(
      { const EditedInput input(beside.dir()); },
      beside.dir() +
          "/edit: the case also holds run_qwen2_5-7b_math.sh, the edited input's "
          "name; the case is not run");
}

}  // namespace
}  // namespace strata::testing::golden_edit_test
