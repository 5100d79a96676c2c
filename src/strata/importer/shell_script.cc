#include "strata/importer/shell_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>

#include "strata/core/text_scan.h"

namespace strata {

namespace {

struct RawWord {
  std::string text;
  int line = 0;
  bool quoted_single = false;  // no expansion inside
  bool quoted = false;         // some part was quoted: "${A[@]}" keeps each element whole
  bool connective = false;     // the && or || that ended the command (the word is last)
  // A quoted word over several lines: (offset in text, line) where each later line starts.
  std::vector<std::pair<size_t, int>> line_starts;
};

// The line the text at `offset` of a word was written on.
int LineAt(const RawWord& w, size_t offset) {
  int line = w.line;
  for (const auto& [from, at] : w.line_starts) {
    if (from <= offset) line = at;
  }
  return line;
}

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Splits the script into commands of raw words. Newlines end a command unless escaped, inside
// quotes, or inside an array assignment's parentheses; ';', '&&' and '||' end one too.
Result<std::vector<std::vector<RawWord>>> Tokenise(std::string_view text, const std::string& file) {
  std::vector<std::vector<RawWord>> commands(1);
  RawWord word;
  bool in_word = false;
  int line = 1;
  int paren_depth = 0;  // inside NAME=( ... )
  auto end_word = [&] {
    if (in_word) commands.back().push_back(word);
    word = RawWord{};
    in_word = false;
  };
  auto end_command = [&] {
    end_word();
    if (!commands.back().empty()) commands.emplace_back();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      end_word();
      ++line;
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      if (!in_word) word.line = line;
      in_word = true;
      word.text += text[++i];
      continue;
    }
    if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
      --i;
      continue;
    }
    if (c == '\'' || c == '"') {
      if (!in_word) word.line = line;
      in_word = true;
      const size_t close = text.find(c, i + 1);
      if (close == std::string_view::npos) {
        return InvalidInput(std::string("unterminated ") + (c == '\'' ? "single" : "double") +
                            " quote")
            .InFile(file)
            .AtLine(line);
      }
      const std::string_view inner = text.substr(i + 1, close - i - 1);
      // Inside double quotes newlines and spaces belong to the word, except a backslash before
      // a newline, which bash removes with the newline (a continued line).
      for (size_t k = 0; k < inner.size(); ++k) {
        const bool continued =
            c == '"' && inner[k] == '\\' && k + 1 < inner.size() && inner[k + 1] == '\n';
        if (continued) ++k;
        if (!continued) word.text += inner[k];
        if (inner[k] == '\n') word.line_starts.emplace_back(word.text.size(), ++line);
      }
      if (c == '\'') word.quoted_single = true;
      word.quoted = true;
      i = close;
      continue;
    }
    if (c == '\n') {
      ++line;
      if (paren_depth > 0) {
        end_word();
      } else {
        end_command();
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      continue;
    }
    // Redirections (`> log`, `2>&1`, `&> log`, `< in`) are not arguments: the operator, a file
    // descriptor written before it and the target word are dropped.
    const bool amp_redirect = c == '&' && i + 1 < text.size() && text[i + 1] == '>';
    if (c == '>' || c == '<' || amp_redirect) {
      if (in_word && !word.quoted && std::all_of(word.text.begin(), word.text.end(), [](char d) {
            return std::isdigit(static_cast<unsigned char>(d));
          })) {
        word = RawWord{};  // the descriptor of `2>`
        in_word = false;
      } else {
        end_word();
      }
      if (amp_redirect) ++i;
      while (i + 1 < text.size() && (text[i + 1] == '>' || text[i + 1] == '<')) ++i;
      if (i + 1 < text.size() && text[i + 1] == '&') {  // >&2, 2>&1, >&-: no target word
        ++i;
        while (i + 1 < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-')) {
          ++i;
        }
        continue;
      }
      while (i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\t')) ++i;
      while (i + 1 < text.size() &&
             std::string_view(" \t\n;|&").find(text[i + 1]) == std::string_view::npos) {
        ++i;  // the target file
      }
      continue;
    }
    // A pipe or a background `&` ends the training command: what follows (tee, wait) is another.
    if ((c == '|' || c == '&') && !(i + 1 < text.size() && text[i + 1] == c)) {
      end_command();
      continue;
    }
    if (c == ';' || ((c == '&' || c == '|') && i + 1 < text.size() && text[i + 1] == c)) {
      if (c != ';') {
        end_word();
        RawWord joiner;
        joiner.text = std::string(2, c);
        joiner.line = line;
        joiner.connective = true;
        commands.back().push_back(joiner);
        ++i;
      }
      end_command();
      continue;
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '(') {
      // $(( arithmetic )) or $( command ): one word up to the matching parenthesis.
      int depth = 0;
      size_t j = i + 1;
      for (; j < text.size(); ++j) {
        if (text[j] == '(') ++depth;
        if (text[j] == ')' && --depth == 0) break;
      }
      if (j >= text.size()) {
        return InvalidInput("unterminated $( in the script").InFile(file).AtLine(line);
      }
      if (!in_word) word.line = line;
      in_word = true;
      for (size_t k = i; k <= j; ++k) line += text[k] == '\n' ? 1 : 0;
      word.text += std::string(text.substr(i, j - i + 1));
      i = j;
      continue;
    }
    if (c == '(' && in_word && !word.text.empty() && word.text.back() == '=') {
      word.text += '(';
      end_word();
      ++paren_depth;
      continue;
    }
    if (c == ')' && paren_depth > 0) {
      end_word();
      RawWord close;
      close.text = ")";
      close.line = line;
      commands.back().push_back(close);
      --paren_depth;
      continue;
    }
    if (!in_word) word.line = line;
    in_word = true;
    word.text += c;
  }
  end_command();
  if (commands.back().empty()) commands.pop_back();
  return commands;
}

// Where each stretch of a value was written: text up to `end` (from the previous span's end) at
// `at`, "cluster.sh:3" or "line 7". A value joined from several variables (ALL="$GPT $PAR") keeps
// each part's file and line, so the words it splits into are traced one by one.
struct Span {
  size_t end = 0;
  std::string at;
};

struct Traced {
  std::string text;
  std::vector<Span> spans;

  void Add(std::string_view s, const std::string& at) {
    if (s.empty()) return;
    text += s;
    if (!spans.empty() && spans.back().at == at) {
      spans.back().end = text.size();
    } else {
      spans.push_back({text.size(), at});
    }
  }
  void Add(const Traced& t) {
    size_t from = 0;
    for (const Span& span : t.spans) {
      Add(std::string_view(t.text).substr(from, span.end - from), span.at);
      from = span.end;
    }
  }
  // The distinct places text[from, to) was written, in order, joined by ", ".
  std::string At(size_t from, size_t to) const {
    std::vector<std::string> places;
    size_t start = 0;
    for (const Span& span : spans) {
      if (span.end > from && start < to &&
          std::find(places.begin(), places.end(), span.at) == places.end()) {
        places.push_back(span.at);
      }
      start = span.end;
    }
    std::string out;
    for (const std::string& p : places) out += (out.empty() ? "" : ", ") + p;
    return out;
  }
};

// Where the text at an offset of a word was written ("cluster.sh:3", "line 7").
using PlaceOf = std::function<std::string(size_t offset)>;

struct Vars {
  std::map<std::string, std::string> scalars;
  std::map<std::string, std::vector<Span>> written;  // where each scalar's parts were written
  std::map<std::string, std::vector<ShellWord>> arrays;
  std::map<std::string, std::string> origins;  // variables a sourced file set: "cluster.sh:3"
};

// Where an array element's text was written: its origin when a sourced file holds it
// ("cluster.sh:3"), else its line in the script.
std::string ElementAt(const ShellWord& w) {
  if (!w.origin.empty() && !w.origin.starts_with("$"))
    return w.origin.substr(0, w.origin.find(','));
  return fmt::format("line {}", w.line);
}

// $(( ... )) arithmetic on integers: + - * / %, parentheses, variables with or without '$'.
class Arithmetic {
 public:
  Arithmetic(std::string_view expr, const std::map<std::string, std::string>& vars)
      : s_(expr), vars_(vars) {}
  std::optional<int64_t> Eval() {
    auto v = Sum();
    Skip();
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void Skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  std::optional<int64_t> Sum() {
    auto v = Product();
    while (v) {
      Skip();
      if (pos_ >= s_.size() || (s_[pos_] != '+' && s_[pos_] != '-')) break;
      const char op = s_[pos_++];
      auto r = Product();
      if (!r) return std::nullopt;
      int64_t out = 0;  // an overflow leaves the expression unresolved (no launch value does)
      if (op == '+' ? __builtin_add_overflow(*v, *r, &out) : __builtin_sub_overflow(*v, *r, &out))
        return std::nullopt;
      v = out;
    }
    return v;
  }
  std::optional<int64_t> Product() {
    auto v = Atom();
    while (v) {
      Skip();
      if (pos_ >= s_.size() || (s_[pos_] != '*' && s_[pos_] != '/' && s_[pos_] != '%')) break;
      const char op = s_[pos_++];
      auto r = Atom();
      if (!r || ((op == '/' || op == '%') && *r == 0)) return std::nullopt;
      if (op == '*') {
        int64_t out = 0;
        if (__builtin_mul_overflow(*v, *r, &out)) return std::nullopt;
        v = out;
        continue;
      }
      // INT64_MIN / -1 is the one division that overflows.
      if (*v == std::numeric_limits<int64_t>::min() && *r == -1) return std::nullopt;
      v = op == '/' ? *v / *r : *v % *r;
    }
    return v;
  }
  std::optional<int64_t> Atom() {
    Skip();
    if (pos_ >= s_.size()) return std::nullopt;
    if (s_[pos_] == '(') {
      ++pos_;
      auto v = Sum();
      Skip();
      if (!v || pos_ >= s_.size() || s_[pos_] != ')') return std::nullopt;
      ++pos_;
      return v;
    }
    if (s_[pos_] == '-') {
      ++pos_;
      auto v = Atom();
      if (!v || *v == std::numeric_limits<int64_t>::min()) return std::nullopt;
      return -*v;
    }
    if (s_[pos_] == '$') ++pos_;
    const size_t start = pos_;
    while (pos_ < s_.size() && IsNameChar(s_[pos_])) ++pos_;
    if (start == pos_) return std::nullopt;
    std::string token(s_.substr(start, pos_ - start));
    if (!std::isdigit(static_cast<unsigned char>(token[0]))) {
      auto it = vars_.find(token);
      if (it == vars_.end()) return std::nullopt;
      token = it->second;
    }
    int64_t out = 0;
    auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
    if (ec != std::errc() || ptr != token.data() + token.size()) return std::nullopt;
    return out;
  }

  std::string_view s_;
  const std::map<std::string, std::string>& vars_;
  size_t pos_ = 0;
};

// Variables the scheduler sets when the job runs: their value is unknown before it.
bool IsSchedulerVariable(const std::string& name) {
  for (const char* prefix : {"SLURM_", "PMI_", "OMPI_COMM_WORLD_", "LSB_", "PBS_"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

// The '}' that closes the brace at `open` (text[open] == '{'), past the ${...} nested in it
// (${A:-${B}/x} ends at its last brace, as in bash); npos when it is not closed.
size_t MatchingBrace(const std::string& text, size_t open) {
  int depth = 1;
  for (size_t k = open + 1; k < text.size(); ++k) {
    if (text[k] == '$' && k + 1 < text.size() && text[k + 1] == '{') {
      ++depth;
      ++k;
    } else if (text[k] == '}' && --depth == 0) {
      return k;
    }
  }
  return std::string::npos;
}

// Expands $VAR, ${VAR} and ${VAR:-default} inside one word (no word splitting of scalars, as
// launch scripts quote them or hold single words). Unknown variables stay as written.
// With `traced`, it also records where each part of the result was written: `at` of its offset
// for the text of `text` itself, the variables' own places for what they expand to.
std::string ExpandScalar(const std::string& text, const Vars& vars, std::string* origin = nullptr,
                         Traced* traced = nullptr, const PlaceOf& at = {}) {
  auto place = [&](size_t offset) { return at ? at(offset) : std::string(); };
  Traced out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out.Add(std::string_view(text).substr(i, 1), place(i));
      continue;
    }
    std::string name, fallback;
    size_t end = i + 1;
    bool has_fallback = false;
    if (text.compare(i, 3, "$((") == 0) {
      const size_t close = text.rfind("))");
      if (close != std::string::npos && close > i + 2) {
        const auto value =
            Arithmetic(std::string_view(text).substr(i + 3, close - i - 3), vars.scalars).Eval();
        if (value) {
          out.Add(std::to_string(*value), place(i));
          i = close + 1;
          continue;
        }
      }
      out.Add(text.substr(i), place(i));  // left as written: reported as an unparsable value later
      break;
    }
    if (text[i + 1] == '{') {
      const size_t close = MatchingBrace(text, i + 1);
      if (close == std::string::npos) {
        out.Add(std::string_view(text).substr(i, 1), place(i));
        continue;
      }
      name = text.substr(i + 2, close - i - 2);
      if (auto dash = name.find(":-"); dash != std::string::npos) {
        // bash removes the quotes of the word: ${A:-"${HOME}/x"} is ${HOME}/x.
        fallback = name.substr(dash + 2);
        std::erase(fallback, '"');
        name = name.substr(0, dash);
        has_fallback = true;
      }
      end = close + 1;
    } else {
      while (end < text.size() && IsNameChar(text[end])) ++end;
      name = text.substr(i + 1, end - i - 1);
    }
    // ${A[@]} or ${A[*]} inside a word ("... ${ARGS[@]} ...", COMMAND="prog ${ARGS[@]}"): the
    // elements joined by blanks, as bash does where the word is not split (an assignment).
    if (name.size() > 3 && (name.ends_with("[@]") || name.ends_with("[*]"))) {
      if (auto a = vars.arrays.find(name.substr(0, name.size() - 3)); a != vars.arrays.end()) {
        for (size_t k = 0; k < a->second.size(); ++k) {
          if (k > 0) out.Add(" ", place(i));
          out.Add(a->second[k].text, ElementAt(a->second[k]));
        }
        i = end - 1;
        continue;
      }
    }
    auto it = vars.scalars.find(name);
    if (it != vars.scalars.end()) {
      Traced value;
      value.text = it->second;
      if (auto w = vars.written.find(name); w != vars.written.end() && !w->second.empty() &&
                                            w->second.back().end == value.text.size()) {
        value.spans = w->second;
      } else if (!value.text.empty()) {
        value.spans = {{value.text.size(), place(i)}};
      }
      out.Add(value);
      if (auto o = vars.origins.find(name); origin != nullptr && o != vars.origins.end()) {
        *origin += (origin->empty() ? "$" : ", $") + name + " from " + o->second;
      }
    } else if (has_fallback && !IsSchedulerVariable(name)) {
      out.Add(ExpandScalar(fallback, vars), place(i));
    } else {
      // Unknown, left as written. So is ${SLURM_NNODES:-1}: Slurm sets it on every real run, so
      // the fallback is what runs only outside Slurm; the value is asked for (--nodes), never
      // taken as 1.
      out.Add(text.substr(i, end - i), place(i));
    }
    i = end - 1;
  }
  if (traced != nullptr) *traced = out;
  return out.text;
}

// "${NAME[@]}" (the whole word): NAME; otherwise "".
std::string ArrayReference(const RawWord& w) {
  if (w.quoted_single || !w.text.starts_with("${") || !w.text.ends_with("[@]}")) return "";
  const std::string name = w.text.substr(2, w.text.size() - 6);
  for (char c : name) {
    if (!IsNameChar(c)) return "";
  }
  return name;
}

// The elements of an array expanded into `out`: "${A[@]}" keeps each element one word; an
// unquoted ${A[@]} splits them on blanks as bash does (DTYPE_ARGS+=("--fp8-format hybrid")
// passed as ${DTYPE_ARGS[@]} is two words).
void AppendArray(const std::vector<ShellWord>& items, bool quoted, std::vector<ShellWord>& out) {
  for (const ShellWord& item : items) {
    if (quoted) {
      out.push_back(item);
      continue;
    }
    size_t pos = 0;
    while (pos < item.text.size()) {
      const size_t start = item.text.find_first_not_of(" \t\n", pos);
      if (start == std::string::npos) break;
      const size_t stop = item.text.find_first_of(" \t\n", start);
      out.push_back({item.text.substr(start, stop - start), item.line, item.origin});
      pos = stop == std::string::npos ? item.text.size() : stop;
    }
  }
}

// One test of an `if`: `[ A OP B ]`, `[[ A OP B ]]`, `[ -z A ]`, `[ -n A ]` on expanded words
// (= == != and the integer -eq -ne -gt -ge -lt -le). nullopt where a word is still unresolved
// (a variable the scheduler sets, a command substitution) or the test is another kind: then
// both branches are read, as before.
std::optional<bool> EvalTest(const std::vector<RawWord>& raw, size_t from, size_t to,
                             const Vars& vars) {
  std::vector<std::string> w;
  for (size_t i = from; i < to; ++i) {
    std::string v = raw[i].quoted_single ? raw[i].text : ExpandScalar(raw[i].text, vars);
    if (!raw[i].quoted_single &&
        (v.find('$') != std::string::npos || v.find('`') != std::string::npos)) {
      return std::nullopt;
    }
    w.push_back(std::move(v));
  }
  if (w.size() < 2) return std::nullopt;
  const bool single = w.front() == "[" && w.back() == "]";
  const bool dbl = w.front() == "[[" && w.back() == "]]";
  if (!single && !dbl) return std::nullopt;
  w = std::vector<std::string>(w.begin() + 1, w.end() - 1);
  if (w.size() == 2 && w[0] == "-z") return w[1].empty();
  if (w.size() == 2 && w[0] == "-n") return !w[1].empty();
  if (w.size() != 3) return std::nullopt;
  const std::string& op = w[1];
  if (op == "=" || op == "==") return w[0] == w[2];
  if (op == "!=") return w[0] != w[2];
  const std::optional<int64_t> a = ParseInt64(w[0]);
  const std::optional<int64_t> b = ParseInt64(w[2]);
  if (!a || !b) return std::nullopt;
  if (op == "-eq") return *a == *b;
  if (op == "-ne") return *a != *b;
  if (op == "-gt") return *a > *b;
  if (op == "-ge") return *a >= *b;
  if (op == "-lt") return *a < *b;
  if (op == "-le") return *a <= *b;
  return std::nullopt;
}

// An unquoted expansion split on blanks, as bash splits it: each word keeps `origin` when its
// text was written at `own` (the place of the word being expanded), else it says where its text
// was written ("cluster.sh:3", "line 7"), so every element of a joined value is traced.
void SplitTraced(const Traced& t, int line, const std::string& own, const std::string& origin,
                 std::vector<ShellWord>& out) {
  size_t pos = 0;
  while (pos < t.text.size()) {
    const size_t start = t.text.find_first_not_of(" \t\n", pos);
    if (start == std::string::npos) break;
    size_t stop = t.text.find_first_of(" \t\n", start);
    if (stop == std::string::npos) stop = t.text.size();
    const std::string at = t.At(start, stop);
    out.push_back({t.text.substr(start, stop - start), line, at == own ? origin : at});
    pos = stop;
  }
}

// A bare unquoted $VAR or ${VAR} whose value holds several words: bash splits it.
bool SplitsOnExpansion(const RawWord& raw, const std::string& expanded) {
  return !raw.quoted_single && raw.text.starts_with("$") && expanded != raw.text &&
         expanded.find_first_of(" \t\n") != std::string::npos;
}

bool IsAssignment(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    if (!IsNameChar(text[i])) return false;
  }
  return !std::isdigit(static_cast<unsigned char>(text[0]));
}

}  // namespace

namespace {

constexpr int kMaxSourceDepth = 8;

// `if` / `elif` / `else` / `fi`: a branch whose test resolves (EvalTest) runs or is skipped as
// bash would; a test that does not resolve reads every branch (a launch's settings may be in
// any of them).
struct IfFrame {
  bool known = true;   // every test so far resolved
  bool taken = false;  // a branch ran
  bool active = true;  // the current branch runs
};

// The condition of an `if` or `elif` at commands[k]: its words after the keyword and the
// commands after it up to `then`, joined by && and ||. `then_at` is where `then` starts (the
// next command where there is none).
std::optional<bool> EvalCondition(std::vector<std::vector<RawWord>>& commands, size_t k,
                                  const Vars& vars, size_t& then_at) {
  then_at = k + 1;
  while (then_at < commands.size() &&
         (commands[then_at].empty() || commands[then_at][0].text != "then")) {
    ++then_at;
  }
  if (then_at >= commands.size()) {
    then_at = k + 1;
    return std::nullopt;
  }
  std::optional<bool> result;
  std::string joiner;
  for (size_t c = k; c < then_at; ++c) {
    std::vector<RawWord>& raw = commands[c];
    const size_t from = c == k ? 1 : 0;
    size_t to = raw.size();
    std::string next;
    if (to > from && raw[to - 1].connective) next = raw[--to].text;
    const std::optional<bool> value = EvalTest(raw, from, to, vars);
    if (c == k) {
      result = value;
    } else if (joiner.empty() || !result || !value) {
      return std::nullopt;  // several commands not joined by && or ||, or an unresolved test
    } else {
      result = joiner == "&&" ? (*result && *value) : (*result || *value);
    }
    joiner = next;
  }
  return result;
}

// `while [[ $# -gt 0 ]]; do ... done` (also [ ], -ne 0, -ge 1): the loop over the script's own
// arguments, whose `case` arms set variables from "$2". strata reads a script as run without
// arguments, so the loop runs zero times, as in bash; its arms are not read. Returns the index
// of the loop's `done` when commands[at] is such a loop, else 0.
size_t ArgumentLoopEnd(const std::vector<std::vector<RawWord>>& commands, size_t at) {
  const std::vector<RawWord>& w = commands[at];
  std::vector<std::string> test;
  for (size_t i = 1; i < w.size() && !w[i].connective; ++i) test.push_back(w[i].text);
  const bool brackets = test.size() == 5 && ((test[0] == "[[" && test[4] == "]]") ||
                                             (test[0] == "[" && test[4] == "]"));
  if (!brackets || test[1] != "$#") return 0;
  const bool some = (test[2] == "-gt" && test[3] == "0") || (test[2] == "-ne" && test[3] == "0") ||
                    (test[2] == "-ge" && test[3] == "1");
  if (!some) return 0;
  int depth = 0;
  for (size_t k = at; k < commands.size(); ++k) {
    if (commands[k].empty() || commands[k][0].quoted) continue;
    const std::string& first = commands[k][0].text;
    if (first == "while" || first == "until" || first == "for" || first == "select") ++depth;
    if (first == "done" && --depth == 0) return k;
  }
  return 0;  // no `done`: read on as before
}

Status RunScript(std::string_view text, const std::string& file, const ShellSourceReader& reader,
                 int depth, Vars& vars, std::vector<ShellCommandLine>& out) {
  STRATA_ASSIGN_OR_RETURN(auto commands, Tokenise(text, file));
  // Words of a sourced file say which file they are in.
  const std::string here = depth == 0 ? "" : std::filesystem::path(file).filename().string();
  auto where = [&](int line) { return here.empty() ? "" : here + ":" + std::to_string(line); };
  // Where text on `line` was written, in this file or the script itself.
  auto written = [&](int line) {
    return here.empty() ? fmt::format("line {}", line) : here + ":" + std::to_string(line);
  };
  // Where each offset of `w`'s text (from `shift` on) was written.
  // (The place is formatted once a line, not once a character.)
  auto places = [&](const RawWord& w, size_t shift) -> PlaceOf {
    return [&w, shift, &written, line = -1, place = std::string()](size_t offset) mutable {
      if (const int at = LineAt(w, offset + shift); at != line) {
        line = at;
        place = written(at);
      }
      return place;
    };
  };
  std::vector<IfFrame> ifs;
  auto running = [&] {
    return std::all_of(ifs.begin(), ifs.end(), [](const IfFrame& f) { return f.active; });
  };
  for (size_t at = 0; at < commands.size(); ++at) {
    std::vector<RawWord>& raw = commands[at];
    if (raw.empty()) continue;
    const std::string keyword = raw[0].quoted ? "" : raw[0].text;
    // The && or || that ended the command joins an `if`'s tests (EvalCondition reads it), and
    // is no word of any other command.
    if (keyword != "if" && keyword != "elif" && raw.back().connective) raw.pop_back();
    if (raw.empty()) continue;
    if (keyword == "if") {
      size_t then_at = 0;
      const std::optional<bool> cond = EvalCondition(commands, at, vars, then_at);
      IfFrame f;
      f.known = cond.has_value();
      f.taken = cond.value_or(false);
      f.active = !cond || *cond;
      ifs.push_back(f);
      at = then_at - 1;  // the `then` command is read next
      continue;
    }
    if (keyword == "elif" && !ifs.empty()) {
      IfFrame& f = ifs.back();
      size_t then_at = 0;
      const std::optional<bool> cond = EvalCondition(commands, at, vars, then_at);
      at = then_at - 1;
      if (f.known && f.taken) {
        f.active = false;
      } else if (f.known && cond) {
        f.active = *cond;
        f.taken = *cond;
      } else {
        f.known = false;
        f.active = true;
      }
      continue;
    }
    if (keyword == "fi" && !ifs.empty()) {
      ifs.pop_back();
      continue;
    }
    if ((keyword == "else" || keyword == "then") && !ifs.empty()) {
      if (keyword == "else") {
        IfFrame& f = ifs.back();
        f.active = !f.known || !f.taken;
      }
      raw.erase(raw.begin());
      if (raw.empty()) continue;
    }
    if (!running()) continue;
    if (keyword == "while") {
      if (const size_t done = ArgumentLoopEnd(commands, at); done > 0) {
        at = done;
        continue;
      }
    }
    size_t i = 0;
    if (!raw.empty() && raw[0].text == "export") i = 1;
    // Array assignment: NAME=( words... ), or an append NAME+=( words... ); the words may
    // expand arrays themselves (ARGS=("${ARGS[@]}" --flag), the older spelling of +=).
    if (i < raw.size() && raw[i].text.size() > 2 && raw[i].text.back() == '(') {
      std::string head = raw[i].text.substr(0, raw[i].text.size() - 1);  // "NAME=" or "NAME+="
      const bool append = head.ends_with("+=");
      if (append) head.erase(head.size() - 2, 1);
      if (IsAssignment(head) && head.find('=') == head.size() - 1) {
        const std::string name = head.substr(0, head.size() - 1);
        std::vector<ShellWord> items;
        for (size_t j = i + 1; j < raw.size() && raw[j].text != ")"; ++j) {
          if (const std::string ref = ArrayReference(raw[j]); !ref.empty()) {
            if (auto it = vars.arrays.find(ref); it != vars.arrays.end()) {
              const std::vector<ShellWord> copy = it->second;  // NAME may be the array itself
              AppendArray(copy, raw[j].quoted, items);
              continue;
            }
          }
          std::string origin = where(raw[j].line);
          Traced traced;
          std::string item = raw[j].quoted_single ? raw[j].text
                                                  : ExpandScalar(raw[j].text, vars, &origin,
                                                                 &traced, places(raw[j], 0));
          // ARGS=($GPT_ARGS --flag): an unquoted variable of several words gives one element
          // each, as bash splits it.
          if (!raw[j].quoted && SplitsOnExpansion(raw[j], item)) {
            SplitTraced(traced, raw[j].line, written(raw[j].line), origin, items);
            continue;
          }
          // An element that is wholly a variable set elsewhere says where ($TP from line 176);
          // one that mixes places (key=$VALUE) keeps its own.
          if (const std::string place = traced.At(0, item.size());
              origin == where(raw[j].line) && !place.empty() && place != written(raw[j].line) &&
              place.find(", ") == std::string::npos) {
            origin = place;
          }
          items.push_back({std::move(item), raw[j].line, std::move(origin)});
        }
        std::vector<ShellWord>& target = vars.arrays[name];
        if (!append) target.clear();
        target.insert(target.end(), items.begin(), items.end());
        continue;
      }
    }
    ShellCommandLine cmd;
    cmd.line = raw.empty() ? 0 : raw[0].line;
    std::map<std::string, std::string> prefix_env;
    std::map<std::string, Traced> prefix_traced;
    for (; i < raw.size() && IsAssignment(raw[i].text); ++i) {
      const size_t eq = raw[i].text.find('=');
      const std::string name = raw[i].text.substr(0, eq);
      Traced& traced = prefix_traced[name];
      if (raw[i].quoted_single) {
        traced = Traced{};
        const std::string value = raw[i].text.substr(eq + 1);
        const PlaceOf place = places(raw[i], eq + 1);
        for (size_t k = 0; k < value.size(); ++k) {
          traced.Add(std::string_view(value).substr(k, 1), place(k));
        }
      } else {
        ExpandScalar(raw[i].text.substr(eq + 1), vars, nullptr, &traced, places(raw[i], eq + 1));
      }
      prefix_env[name] = traced.text;
    }
    if (i >= raw.size()) {
      // Only assignments: they set shell variables for the rest of the script.
      for (auto& [k, v] : prefix_env) {
        vars.scalars[k] = v;
        vars.written[k] = prefix_traced[k].spans;
        if (here.empty()) {
          vars.origins.erase(k);
        } else {
          vars.origins[k] = where(cmd.line);
        }
      }
      continue;
    }
    // `export A=x source y` exports three names (Megatron-LM's sc21 CONFIG.sh writes
    // `export MEGATRON_CODE_DIR=<megatron source code directory>`): after export no word is a
    // command.
    if (raw[0].text != "export" && (raw[i].text == "source" || raw[i].text == ".") &&
        i + 1 < raw.size() && reader) {
      const std::string path = ExpandScalar(raw[i + 1].text, vars);
      STRATA_ASSIGN_OR_RETURN(std::optional<ShellSource> sourced,
                              reader(path, file, raw[i].line, "source"));
      if (sourced) {
        if (depth + 1 > kMaxSourceDepth) {
          return InvalidInput(fmt::format("source {}: files source each other more than {} deep",
                                          path, kMaxSourceDepth))
              .InFile(file)
              .AtLine(raw[i].line);
        }
        STRATA_RETURN_IF_ERROR(
            RunScript(sourced->text, sourced->file, reader, depth + 1, vars, out));
        continue;
      }
    }
    cmd.env = vars.scalars;
    cmd.env_origin = vars.origins;
    for (auto& [k, v] : prefix_env) {
      cmd.env[k] = v;
      cmd.env_origin.erase(k);
    }
    for (; i < raw.size(); ++i) {
      const std::string& w = raw[i].text;
      if (const std::string ref = ArrayReference(raw[i]); !ref.empty()) {
        if (auto it = vars.arrays.find(ref); it != vars.arrays.end()) {
          AppendArray(it->second, raw[i].quoted, cmd.words);
          continue;
        }
      }
      std::string origin = where(raw[i].line);
      Traced traced;
      std::string expanded =
          raw[i].quoted_single ? w : ExpandScalar(w, vars, &origin, &traced, places(raw[i], 0));
      // An unquoted expansion of a scalar holding several words splits them (FIXED_ARGS="..."),
      // which only matters when the word was a bare $VAR.
      if (SplitsOnExpansion(raw[i], expanded)) {
        SplitTraced(traced, raw[i].line, written(raw[i].line), origin, cmd.words);
        continue;
      }
      if (const std::string place = traced.At(0, expanded.size());
          origin == where(raw[i].line) && !place.empty() && place != written(raw[i].line) &&
          place.find(", ") == std::string::npos) {
        origin = place;
      }
      cmd.words.push_back({expanded, raw[i].line, origin});
    }
    // `sbatch [options] run.sh`: the batch script a submitting script hands to Slurm (Megatron-LM's
    // sc21 SBATCH.sh submits SRUN.sh, which holds the launch).
    const std::optional<size_t> script_at =
        reader ? SbatchScriptIndex(cmd.words) : std::optional<size_t>();
    const std::string batch_script =
        script_at && *script_at < cmd.words.size() ? cmd.words[*script_at].text : "";
    const int cmd_line = cmd.line;
    out.push_back(std::move(cmd));
    if (!batch_script.empty()) {
      STRATA_ASSIGN_OR_RETURN(std::optional<ShellSource> batch,
                              reader(batch_script, file, cmd_line, "sbatch"));
      if (batch) {
        if (depth + 1 > kMaxSourceDepth) {
          return InvalidInput(fmt::format("sbatch {}: files source each other more than {} deep",
                                          batch_script, kMaxSourceDepth))
              .InFile(file)
              .AtLine(cmd_line);
        }
        STRATA_RETURN_IF_ERROR(RunScript(batch->text, batch->file, reader, depth + 1, vars, out));
      }
    }
  }
  return OkStatus();
}

}  // namespace

std::optional<size_t> SbatchScriptIndex(const std::vector<ShellWord>& words) {
  if (words.empty() || !(words[0].text == "sbatch" || words[0].text.ends_with("/sbatch"))) {
    return std::nullopt;
  }
  for (size_t k = 1; k < words.size(); ++k) {
    const std::string& t = words[k].text;
    if (!t.starts_with("-") &&
        (t.ends_with(".sh") || t.ends_with(".slurm") || t.ends_with(".sbatch"))) {
      return k;
    }
  }
  return words.size();
}

Result<std::vector<ShellCommandLine>> ParseShellScript(std::string_view text,
                                                       const std::string& file,
                                                       const ShellSourceReader& reader) {
  Vars vars;
  std::vector<ShellCommandLine> out;
  STRATA_RETURN_IF_ERROR(RunScript(text, file, reader, 0, vars, out));
  return out;
}

}  // namespace strata
