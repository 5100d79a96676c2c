// A golden case whose input is another case's input with a few lines edited, so that a public
// script is stored once however many cases edit it. The case directory holds an `edit` file:
//
//   # the verl_recipe_one_step_off script with no rollout nodes
//   from    | ../verl_recipe_one_step_off/dapo_7b_math_fsdp2_64_64.sh
//   replace | NNODES_ROLLOUT=${NNODES_ROLLOUT:-8}
//   with    | NNODES_ROLLOUT=${NNODES_ROLLOUT:-0}
//
// Each line is a keyword, '|', one space, and a line of text taken literally (its leading spaces
// kept); blank lines and '#' lines are comments. The keywords:
//   from      the input edited, relative to the case directory (once, first)
//   as        the edited input's file name (once, before the edits; default: the input's)
//   replace   a whole line of the input ...
//   with      ... and the line that stands for it
//   delete    a whole line of the input, removed
//   after     a whole line of the input: the `insert` lines that follow go below it
//   insert    a line added (after `after` or the previous `insert`)
//   end after a whole line of the input: the input stops after it (a truncated file)
// Each named line must stand exactly once in the text the edits before it left: one that is not
// found (or is found twice) fails the test, naming the edit file and its line, and the case is
// not run (never on the unedited input). The edited input is written to a temporary folder and
// never into the source tree, beside copies of the case directory's own files (all but `edit`,
// `args` and `expected*`: a file the input names beside it). An edit file with no edits stores an
// exact copy of the input, alone in a folder of the case's name: a case about what is not beside
// it (a sourced file, a config the script names).
#ifndef STRATA_TESTS_SUPPORT_GOLDEN_EDIT_H_
#define STRATA_TESTS_SUPPORT_GOLDEN_EDIT_H_

#include <optional>
#include <string>
#include <vector>

namespace strata::testing {

struct LineEdit {
  enum class Kind { kReplace, kDelete, kInsertAfter, kEndAfter };
  Kind kind = Kind::kReplace;
  int edit_line = 0;                // where it stands in the edit file
  std::string line;                 // the input's line it names
  std::vector<std::string> insert;  // kReplace: the one new line; kInsertAfter: the lines added
};

struct LineEdits {
  std::string from;  // the edited input, relative to the edit file's folder
  std::string as;    // the edited input's file name; "" keeps from's
  std::vector<LineEdit> edits;
  std::string error;  // "" when the edit file is well formed
};

/// Reads an edit file's text; `name` is used in errors ("<name>:<line>: ...").
LineEdits ParseLineEdits(const std::string& text, const std::string& name);

struct EditedText {
  std::string text;
  std::string error;  // "" when every edit applied
};

/// Applies `edits` (read from `edits_name`) to `base` (read from `base_name`), in order.
EditedText ApplyLineEdits(const LineEdits& edits, const std::string& edits_name,
                          const std::string& base, const std::string& base_name);

/// The edited input of a case, written to a fresh temporary folder as
/// <folder>/<case name>/<the input's file name, or `as`> (a path that ends as the case
/// directory's would), beside copies of the case's own files, removed again when this goes. Fails
/// the current test when the edit file does not read or an edit does not apply; path() is then "".
class EditedInput {
 public:
  /// `case_dir`: an absolute case directory holding an `edit` file.
  explicit EditedInput(const std::string& case_dir);
  ~EditedInput();
  EditedInput(const EditedInput&) = delete;
  EditedInput& operator=(const EditedInput&) = delete;

  /// The edited input; "" when an edit did not apply (the test has failed).
  const std::string& path() const { return path_; }
  /// The folder that stands for the case directory ("{golden}" in a golden's output).
  const std::string& dir() const { return dir_; }

 private:
  std::string root_;
  std::string dir_;
  std::string path_;
};

/// Whether an absolute case directory is stored in the edit form (holds an `edit` file).
bool HasEdit(const std::string& case_dir);

/// A case's input by its file name, however the case is stored: <case_dir>/<file>, or for a case
/// in the edit form the same name in the folder that stands for the case directory (the edited
/// input or a file copied beside it). Fails the current test like EditedInput; path() is then "".
class CaseInput {
 public:
  CaseInput(const std::string& case_dir, const std::string& file);
  CaseInput(const CaseInput&) = delete;
  CaseInput& operator=(const CaseInput&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::optional<EditedInput> edited_;
  std::string path_;
};

}  // namespace strata::testing

#endif  // STRATA_TESTS_SUPPORT_GOLDEN_EDIT_H_
