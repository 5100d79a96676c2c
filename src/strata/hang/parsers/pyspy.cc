#include "strata/hang/parsers/pyspy.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "strata/core/json_input.h"
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang {
namespace {

// Reprs and error paragraphs are kept for the report, but never without bound.
constexpr size_t kMaxKeptText = 4096;
// py-spy's JSON is 4 levels deep (array, trace, frames, locals); anything far deeper is hostile.
constexpr size_t kMaxJsonDepth = 32;

// pdsh writes "host: ", srun --label "3: ", Ray "(WorkerDict pid=12) " before every line.
std::string_view StripWrapperPrefix(std::string_view line) {
  if (line.starts_with("(")) {
    const size_t close = line.find(") ");
    if (close != std::string_view::npos) return line.substr(close + 2);
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return line;
  const std::string_view token = line.substr(0, colon);
  if (token.find_first_of(" \t") != std::string_view::npos || token == "Error") return line;
  if (colon + 1 == line.size()) return line.substr(colon + 1);
  if (line[colon + 1] == ' ') return line.substr(colon + 2);
  return line;
}

template <class T>
std::optional<T> ParseInt(std::string_view s, int base = 10) {
  T value{};
  if (s.empty()) return std::nullopt;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

bool IsPythonFile(std::string_view file) {
  return file.ends_with(".py") || file.ends_with(".pyx") || file.starts_with("<");
}

// "func (file:line)" or "func (file)": anchor on the last " (" because names hold spaces and "::".
std::optional<PyFrame> ParseFrame(std::string_view body) {
  if (body.empty() || body.back() != ')') return std::nullopt;
  const size_t open = body.rfind(" (");
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  PyFrame frame;
  frame.function = std::string(body.substr(0, open));
  std::string_view location = body.substr(open + 2, body.size() - open - 3);
  const size_t colon = location.rfind(':');
  if (colon != std::string_view::npos) {
    if (auto line = ParseInt<int>(location.substr(colon + 1))) {
      frame.line = *line;
      location = location.substr(0, colon);
    }
  }
  frame.file = std::string(location);
  frame.native = !IsPythonFile(frame.file);
  return frame;
}

// "Thread <tid>[ (<status>)][: "<name>"]"
std::optional<PyThread> ParseThreadHeader(std::string_view rest) {
  PyThread thread;
  size_t end = rest.find_first_of(" :");
  const std::string_view id = rest.substr(0, end);
  std::optional<uint64_t> tid = id.starts_with("0x") || id.starts_with("0X")
                                    ? ParseInt<uint64_t>(id.substr(2), 16)
                                    : ParseInt<uint64_t>(id);
  if (!tid) return std::nullopt;
  thread.thread_id = *tid;
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (rest.starts_with(" (")) {
    const size_t close = rest.find(')');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view status = rest.substr(2, close - 2);
    if (status == "idle") {
      thread.idle = true;
    } else if (status == "active+gil" || status == "gil") {
      thread.gil = true;
    } else if (status != "active") {
      return std::nullopt;
    }
    rest = rest.substr(close + 1);
  }
  if (rest.starts_with(": \"") && rest.ends_with("\"") && rest.size() >= 4) {
    thread.name = std::string(rest.substr(3, rest.size() - 4));
    rest = {};
  }
  if (!rest.empty()) return std::nullopt;
  return thread;
}

void AppendBounded(std::string& to, std::string_view text) {
  if (to.size() >= kMaxKeptText) return;
  to.append(text.substr(0, kMaxKeptText - to.size()));
}

class TextParser {
 public:
  explicit TextParser(const std::string& file) : file_(file) {}

  Result<std::vector<PySpyDump>> Parse(std::string_view text) {
    int line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      const bool last_unterminated = nl == std::string_view::npos;
      if (last_unterminated) nl = text.size();
      std::string_view raw = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++line_no;
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      std::string cleaned;
      raw = StripAnsiEscapes(raw, cleaned);
      const std::string_view line = StripWrapperPrefix(raw);
      if (Line(line)) continue;
      if (last_unterminated) {
        if (dumps_.empty()) Current();
        dumps_.back().truncated = true;
        break;
      }
      return InvalidInput(
                 fmt::format("not a py-spy dump line: '{}'; expected 'Process <pid>: ...', "
                             "'Thread <tid> (<status>): \"<name>\"', a 4-space frame "
                             "'func (file:line)', or a py-spy error",
                             std::string(raw.substr(0, 120))))
          .InFile(file_)
          .AtLine(line_no);
    }
    if (dumps_.empty()) {
      return InvalidInput("empty py-spy dump: no 'Process', 'Thread' or error line found")
          .InFile(file_)
          .WithHint(
              "was py-spy run with 'dump --pid <PID>'? an empty file usually means it "
              "was killed by the collection timeout");
    }
    return std::move(dumps_);
  }

 private:
  PySpyDump& Current() {
    if (dumps_.empty()) dumps_.emplace_back();
    return dumps_.back();
  }

  // Returns false when the line fits no rule.
  bool Line(std::string_view line) {
    // Blank lines separate blocks (and "Caused by:" from its error); a line of dashes separates
    // --subprocesses children.
    if (line.find_first_not_of('-') == std::string_view::npos) return true;
    if (line.starts_with("Process ")) {
      const size_t colon = line.find(':');
      const auto pid = ParseInt<int64_t>(
          line.substr(8, colon == std::string_view::npos ? std::string_view::npos : colon - 8));
      if (!pid) return false;
      dumps_.emplace_back();
      dumps_.back().pid = *pid;
      if (colon != std::string_view::npos && colon + 2 <= line.size()) {
        dumps_.back().program = std::string(line.substr(colon + 2));
      }
      in_error_ = false;
      locals_ = false;
      return true;
    }
    if (line.starts_with("Python v")) {
      const size_t space = line.find(' ', 8);
      Current().python_version = std::string(line.substr(8, space - 8));
      return true;
    }
    if (line.starts_with("Parent Process ")) return true;
    if (line.starts_with("Thread ")) {
      auto thread = ParseThreadHeader(line.substr(7));
      if (!thread) return false;
      // Interleaved output of several processes (srun --label, Ray) without Process headers: a
      // second MainThread starts the next process.
      if (thread->name == "MainThread" && !dumps_.empty() &&
          std::any_of(Current().threads.begin(), Current().threads.end(),
                      [](const PyThread& t) { return t.name == "MainThread"; })) {
        dumps_.emplace_back();
      }
      PySpyDump& dump = Current();
      if (!dump.error.empty()) dumps_.emplace_back();
      PySpyDump& target = Current();
      // On Linux the main thread's id is the pid (section 1.2); use it when no header said.
      if (target.pid == 0 && thread->name == "MainThread" && line.substr(7, 2) != "0x") {
        target.pid = static_cast<int64_t>(thread->thread_id);
      }
      target.threads.push_back(std::move(*thread));
      in_error_ = false;
      locals_ = false;
      return true;
    }
    if (line.starts_with("Error: ") || line.starts_with("Permission Denied")) {
      StartError(line);
      return true;
    }
    if (line.starts_with("            ") && locals_ && !Current().threads.empty() &&
        !Current().threads.back().frames.empty()) {
      const std::string_view body = line.substr(12);
      const size_t colon = body.find(": ");
      if (colon == std::string_view::npos) return false;
      auto& locals = Current().threads.back().frames.back().locals;
      locals.emplace_back(std::string(body.substr(0, colon)), std::string(body.substr(colon + 2)));
      return true;
    }
    if (line.starts_with("        ") && !dumps_.empty() && !Current().threads.empty() &&
        !Current().threads.back().frames.empty()) {
      const std::string_view body = line.substr(8);
      if (body == "Arguments:" || body == "Locals:" || body == "Arguments::" ||
          body == "Locals::") {
        locals_ = true;
        return true;
      }
    }
    if (line.starts_with("    ") && !line.starts_with("     ") && !in_error_ && !dumps_.empty() &&
        !Current().threads.empty()) {
      auto frame = ParseFrame(line.substr(4));
      if (!frame) return false;
      Current().threads.back().frames.push_back(std::move(*frame));
      locals_ = false;
      return true;
    }
    if (in_error_) {  // "Caused by:" and the paragraph after "Permission Denied"
      std::string& error = Current().error;
      AppendBounded(error, " ");
      const size_t first = line.find_first_not_of(' ');
      AppendBounded(error, line.substr(first == std::string_view::npos ? 0 : first));
      return true;
    }
    return false;
  }

  void StartError(std::string_view line) {
    // py-spy prints errors on stderr with no Process header; a dump that already has threads
    // belongs to another pid, so the error starts a dump of its own.
    if (dumps_.empty() || !Current().threads.empty() || !Current().error.empty()) {
      dumps_.emplace_back();
    }
    const bool permission = line.starts_with("Permission Denied");
    const bool gone = line.find("check if it is running") != std::string_view::npos ||
                      line.find("Check that the process is running") != std::string_view::npos;
    std::string& error = Current().error;
    error = permission ? "permission denied: " : gone ? "process gone: " : "py-spy failed: ";
    AppendBounded(error, permission ? line : line.substr(7));
    in_error_ = true;
    locals_ = false;  // the error starts a dump with no threads: no frame owns later locals
  }

  const std::string& file_;
  std::vector<PySpyDump> dumps_;
  bool in_error_ = false;
  bool locals_ = false;
};

// --- JSON ---------------------------------------------------------------------------------

int LineOfOffset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(
                 std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
}

using JsonValue = nlohmann::json;

struct JsonReader {
  const std::string& file;
  Error Bad(const std::string& field, const std::string& expected, const JsonValue& got) const {
    return InvalidInput(fmt::format("expected {}, got {} '{}'", expected, got.type_name(),
                                    JsonPreview(got, 60)))
        .InFile(file)
        .InField(field);
  }
};

Result<PyThread> ThreadFromJson(const JsonValue& trace, const std::string& field,
                                const JsonReader& reader, int64_t& pid) {
  if (!trace.is_object()) return reader.Bad(field, "an object (one thread)", trace);
  PyThread thread;
  auto integer = [&](const char* key, auto& out) -> Status {
    auto it = trace.find(key);
    if (it == trace.end() || it->is_null()) return OkStatus();
    if (!it->is_number_integer()) return reader.Bad(field + "." + key, "an integer", *it);
    out = it->template get<std::remove_reference_t<decltype(out)>>();
    return OkStatus();
  };
  STRATA_RETURN_IF_ERROR(integer("pid", pid));
  uint64_t python_thread_id = 0, os_thread_id = 0;
  STRATA_RETURN_IF_ERROR(integer("thread_id", python_thread_id));
  STRATA_RETURN_IF_ERROR(integer("os_thread_id", os_thread_id));
  // Text mode prints the OS thread id when py-spy resolved it; do the same.
  thread.thread_id = os_thread_id != 0 ? os_thread_id : python_thread_id;
  if (auto it = trace.find("thread_name"); it != trace.end() && !it->is_null()) {
    if (!it->is_string()) return reader.Bad(field + ".thread_name", "a string or null", *it);
    thread.name = it->get<std::string>();
  }
  if (auto it = trace.find("active"); it != trace.end() && it->is_boolean())
    thread.idle = !it->get<bool>();
  if (auto it = trace.find("owns_gil"); it != trace.end() && it->is_boolean())
    thread.gil = it->get<bool>();
  auto frames = trace.find("frames");
  if (frames == trace.end() || frames->is_null()) return thread;
  if (!frames->is_array()) return reader.Bad(field + ".frames", "an array", *frames);
  for (size_t i = 0; i < frames->size(); ++i) {
    const JsonValue& f = (*frames)[i];
    const std::string ffield = fmt::format("{}.frames[{}]", field, i);
    if (!f.is_object()) return reader.Bad(ffield, "an object (one frame)", f);
    PyFrame frame;
    auto string_of = [&](const char* key) -> Result<std::string> {
      auto it = f.find(key);
      if (it == f.end() || it->is_null()) return std::string();
      if (!it->is_string()) return reader.Bad(ffield + "." + key, "a string or null", *it);
      return it->get<std::string>();
    };
    STRATA_ASSIGN_OR_RETURN(frame.function, string_of("name"));
    STRATA_ASSIGN_OR_RETURN(std::string short_name, string_of("short_filename"));
    STRATA_ASSIGN_OR_RETURN(std::string full_name, string_of("filename"));
    STRATA_ASSIGN_OR_RETURN(std::string module, string_of("module"));
    frame.file = short_name.empty() ? full_name : short_name;
    frame.native = !module.empty();
    if (auto it = f.find("line"); it != f.end() && !it->is_null()) {
      if (!it->is_number_integer()) return reader.Bad(ffield + ".line", "an integer", *it);
      const int64_t line = it->get<int64_t>();
      frame.line = line < 0 || line > INT32_MAX ? 0 : static_cast<int>(line);
    }
    if (auto it = f.find("locals"); it != f.end() && it->is_array()) {
      for (const JsonValue& local : *it) {
        if (!local.is_object()) continue;
        const auto name = local.find("name");
        const auto repr = local.find("repr");
        frame.locals.emplace_back(
            name != local.end() && name->is_string() ? name->get<std::string>() : "?",
            repr != local.end() && repr->is_string() ? repr->get<std::string>() : "?");
      }
    }
    thread.frames.push_back(std::move(frame));
  }
  return thread;
}

Result<std::vector<PySpyDump>> ParseJson(std::string_view text, const std::string& file) {
  if (JsonTooDeepAt(text, kMaxJsonDepth)) {
    return InvalidInput(fmt::format("py-spy JSON nests deeper than {} levels; py-spy writes 4",
                                    kMaxJsonDepth))
        .InFile(file);
  }
  JsonValue root;
  try {
    root = JsonValue::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return InvalidInput(fmt::format("malformed py-spy JSON (truncated?): {}", e.what()))
        .InFile(file)
        .AtLine(LineOfOffset(text, e.byte));
  } catch (const nlohmann::json::exception& e) {  // out_of_range: a number such as 1e400
    return InvalidInput(fmt::format("malformed py-spy JSON: {}", e.what())).InFile(file);
  }
  const JsonReader reader{file};
  if (!root.is_array())
    return reader.Bad("", "an array of thread traces (py-spy dump --json)", root);
  std::vector<PySpyDump> dumps;
  // py-spy's JSON lists threads newest first; text prints oldest (MainThread) first. Match text.
  for (size_t i = root.size(); i-- > 0;) {
    int64_t pid = 0;
    STRATA_ASSIGN_OR_RETURN(PyThread thread,
                            ThreadFromJson(root[i], fmt::format("[{}]", i), reader, pid));
    auto it =
        std::find_if(dumps.begin(), dumps.end(), [&](const PySpyDump& d) { return d.pid == pid; });
    if (it == dumps.end()) {
      dumps.emplace_back();
      dumps.back().pid = pid;
      it = dumps.end() - 1;
    }
    it->threads.push_back(std::move(thread));
  }
  if (dumps.empty()) dumps.emplace_back();  // "[]": a process with no Python threads
  return dumps;
}

}  // namespace

Result<std::vector<PySpyDump>> ParsePySpy(std::string_view text, const std::string& file) {
  // JSON is an array of objects; "[rank3]: ..." is a log line, not JSON.
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {
    const size_t second = text.find_first_not_of(" \t\r\n", first + 1);
    if (second == std::string_view::npos || text[second] == '{' || text[second] == '[' ||
        text[second] == ']') {
      return ParseJson(text, file);
    }
  }
  return TextParser(file).Parse(text);
}

const PyThread* MainThread(const PySpyDump& dump) {
  if (dump.threads.empty()) return nullptr;
  for (const PyThread& t : dump.threads) {
    if (t.name == "MainThread") return &t;
  }
  for (const PyThread& t : dump.threads) {
    if (dump.pid > 0 && t.thread_id == static_cast<uint64_t>(dump.pid)) return &t;
  }
  return &dump.threads.front();
}

}  // namespace strata::hang
