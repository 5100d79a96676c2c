#include "support/golden_edit.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "strata/core/file_io.h"
#include "strata/core/text_scan.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;

std::string Where(const std::string& name, int line) { return name + ":" + std::to_string(line); }

// The input's lines, and whether its last line ends with a newline (kept as it was).
struct Lines {
  std::vector<std::string> lines;
  bool final_newline = false;
};

Lines Split(const std::string& text) {
  Lines out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.lines.push_back(line);
  out.final_newline = !text.empty() && text.back() == '\n';
  return out;
}

std::string Join(const Lines& l) {
  std::string out;
  for (size_t i = 0; i < l.lines.size(); ++i) {
    if (i > 0) out += '\n';
    out += l.lines[i];
  }
  if (l.final_newline && !l.lines.empty()) out += '\n';
  return out;
}

}  // namespace

LineEdits ParseLineEdits(const std::string& text, const std::string& name) {
  LineEdits out;
  auto fail = [&](int line, const std::string& what) {
    out.error = Where(name, line) + ": " + what;
    return out;
  };
  std::istringstream in(text);
  int n = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++n;
    if (TrimSpace(raw).empty() || TrimSpace(raw).starts_with('#')) continue;
    const size_t bar = raw.find('|');
    if (bar == std::string::npos) {
      return fail(n, "expected '<keyword> | <line>', got '" + raw + "'");
    }
    const std::string keyword = std::string(TrimSpace(raw.substr(0, bar)));
    // One space after the '|' separates; the rest is the line, leading spaces and all.
    std::string literal = raw.substr(bar + 1);
    if (literal.starts_with(' ')) literal.erase(0, 1);
    LineEdit* last = out.edits.empty() ? nullptr : &out.edits.back();
    if (keyword == "from") {
      if (!out.from.empty()) return fail(n, "a second 'from': an edit file edits one input");
      out.from = std::string(TrimSpace(literal));
      continue;
    }
    if (out.from.empty()) return fail(n, "'" + keyword + "' before 'from | <the input edited>'");
    if (keyword == "as") {
      if (!out.edits.empty()) return fail(n, "'as' after an edit: name the file before the edits");
      if (!out.as.empty()) return fail(n, "a second 'as': the edited input has one name");
      out.as = std::string(TrimSpace(literal));
      if (out.as.empty() || out.as.find('/') != std::string::npos || out.as == "." ||
          out.as == "..") {
        return fail(n, "'as' takes a file name (no '/'), got '" + out.as + "'");
      }
      continue;
    }
    if (last != nullptr && last->kind == LineEdit::Kind::kReplace && last->insert.empty() &&
        keyword != "with") {
      return fail(n, "'" + keyword + "' after 'replace' (line " + std::to_string(last->edit_line) +
                         "): expected 'with | <new line>'");
    }
    if (keyword == "with") {
      if (last == nullptr || last->kind != LineEdit::Kind::kReplace || !last->insert.empty()) {
        return fail(n, "'with' must follow 'replace | <line>'");
      }
      last->insert.push_back(literal);
    } else if (keyword == "insert") {
      if (last == nullptr || last->kind != LineEdit::Kind::kInsertAfter) {
        return fail(n, "'insert' must follow 'after | <line>' (or another 'insert')");
      }
      last->insert.push_back(literal);
    } else if (keyword == "replace" || keyword == "delete" || keyword == "after" ||
               keyword == "end after") {
      if (last != nullptr && last->kind == LineEdit::Kind::kInsertAfter && last->insert.empty()) {
        return fail(n, "'after' (line " + std::to_string(last->edit_line) +
                           ") is not followed by 'insert | <new line>'");
      }
      LineEdit e;
      e.kind = keyword == "replace"  ? LineEdit::Kind::kReplace
               : keyword == "delete" ? LineEdit::Kind::kDelete
               : keyword == "after"  ? LineEdit::Kind::kInsertAfter
                                     : LineEdit::Kind::kEndAfter;
      e.edit_line = n;
      e.line = literal;
      out.edits.push_back(std::move(e));
    } else {
      return fail(n, "unknown keyword '" + keyword +
                         "' (from, as, replace, with, delete, after, insert, end after)");
    }
  }
  if (out.from.empty()) {
    out.error = name + ": names no input ('from | <the input edited>')";
  } else if (out.edits.empty()) {
    // An exact copy, alone in a folder of the case's name: a case about what is not beside it.
  } else if (const LineEdit& last = out.edits.back();
             (last.kind == LineEdit::Kind::kReplace || last.kind == LineEdit::Kind::kInsertAfter) &&
             last.insert.empty()) {
    out.error = Where(name, last.edit_line) + ": '" +
                (last.kind == LineEdit::Kind::kReplace ? "replace" : "after") +
                "' is the last line: the new line is missing";
  }
  return out;
}

EditedText ApplyLineEdits(const LineEdits& edits, const std::string& edits_name,
                          const std::string& base, const std::string& base_name) {
  EditedText out;
  if (!edits.error.empty()) {
    out.error = edits.error;
    return out;
  }
  Lines l = Split(base);
  for (const LineEdit& e : edits.edits) {
    std::vector<size_t> at;
    for (size_t i = 0; i < l.lines.size(); ++i) {
      if (l.lines[i] == e.line) at.push_back(i);
    }
    if (at.size() != 1) {
      std::string where;
      for (size_t i : at) where += (where.empty() ? "" : ", ") + std::to_string(i + 1);
      out.error = Where(edits_name, e.edit_line) + ": the line '" + e.line + "' " +
                  (at.empty() ? "is not in " + base_name
                              : "stands " + std::to_string(at.size()) + " times in " + base_name +
                                    " (lines " + where + "): name a line that stands once") +
                  " (the edits before it applied)";
      return out;
    }
    const auto pos = l.lines.begin() + static_cast<std::ptrdiff_t>(at[0]);
    switch (e.kind) {
      case LineEdit::Kind::kReplace:
        *pos = e.insert[0];
        break;
      case LineEdit::Kind::kDelete:
        l.lines.erase(pos);
        break;
      case LineEdit::Kind::kInsertAfter:
        l.lines.insert(pos + 1, e.insert.begin(), e.insert.end());
        break;
      case LineEdit::Kind::kEndAfter:
        l.lines.erase(pos + 1, l.lines.end());
        l.final_newline = true;
        break;
    }
  }
  out.text = Join(l);
  return out;
}

bool HasEdit(const std::string& case_dir) { return fs::exists(fs::path(case_dir) / "edit"); }

EditedInput::EditedInput(const std::string& case_dir) {
  const fs::path edit_file = fs::path(case_dir) / "edit";
  if (!fs::exists(edit_file)) {
    ADD_FAILURE() << "missing edit file " << edit_file.string();
    return;
  }
  const auto edit_text = ReadFile(edit_file.string());
  if (!edit_text.ok()) {
    ADD_FAILURE() << edit_text.error().Format();
    return;
  }
  const LineEdits edits = ParseLineEdits(*edit_text, edit_file.string());
  if (!edits.error.empty()) {
    ADD_FAILURE() << edits.error;
    return;
  }
  const fs::path base = (fs::path(case_dir) / edits.from).lexically_normal();
  const auto base_text = ReadFile(base.string());
  if (!base_text.ok()) {
    ADD_FAILURE() << edit_file.string() << ": 'from' names " << base.string()
                  << ", which does not read: " << base_text.error().Format();
    return;
  }
  const EditedText edited = ApplyLineEdits(edits, edit_file.string(), *base_text, base.string());
  if (!edited.error.empty()) {
    ADD_FAILURE() << edited.error << "; the case is not run";
    return;
  }
  std::string tmpl = (fs::temp_directory_path() / "strata_edit_XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    ADD_FAILURE() << "cannot create a temporary folder for " << edit_file.string();
    return;
  }
  root_ = tmpl;
  // The case's own name under the folder: a path printed or checked ends as the case's would.
  fs::path case_path = fs::path(case_dir).lexically_normal();
  if (!case_path.has_filename()) case_path = case_path.parent_path();
  const fs::path dir = fs::path(root_) / case_path.filename();
  fs::create_directories(dir);
  const fs::path file = dir / (edits.as.empty() ? base.filename() : fs::path(edits.as));
  // The case's own files (a file the input names beside it) stand beside the edited input.
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    const std::string name = entry.path().filename().string();
    if (name == "edit" || name == "args" || name.starts_with("expected")) continue;
    if (name == file.filename().string()) {
      ADD_FAILURE() << edit_file.string() << ": the case also holds " << name
                    << ", the edited input's name; the case is not run";
      return;
    }
    std::error_code failed;
    fs::copy(entry.path(), dir / name, fs::copy_options::recursive, failed);
    if (failed) {
      ADD_FAILURE() << "cannot copy " << entry.path().string() << ": " << failed.message();
      return;
    }
  }
  std::ofstream(file, std::ios::binary) << edited.text;
  dir_ = dir.string();
  path_ = file.string();
}

EditedInput::~EditedInput() {
  if (root_.empty()) return;
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

CaseInput::CaseInput(const std::string& case_dir, const std::string& file) {
  if (!HasEdit(case_dir)) {
    path_ = (fs::path(case_dir) / file).string();
    return;
  }
  edited_.emplace(case_dir);
  if (edited_->path().empty()) return;  // the edit did not apply (the test has failed)
  path_ = (fs::path(edited_->dir()) / file).string();
}

}  // namespace strata::testing
