#include "strata/profile/json_stream.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <vector>

namespace strata::profile {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr size_t kMaxNumberChars = 64;

std::string Shown(int c) {
  if (c < 0) return "the end of the input";
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02x}", c);
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class Reader {
 public:
  Reader(const ChunkReader& read, JsonHandler& handler, size_t max_depth)
      : read_(read), handler_(handler), max_depth_(max_depth), buffer_(kChunkBytes) {}

  std::optional<JsonStreamError> Run();

 private:
  enum class Expect : uint8_t { kValue, kValueOrEnd, kKeyOrEnd, kKey, kColon, kCommaOrEnd, kDone };

  // The next byte without consuming it; -1 at the end (or on a read error).
  int Peek() {
    if (pos_ == end_ && !Refill()) return -1;
    return static_cast<unsigned char>(buffer_[pos_]);
  }
  int Next() {
    const int c = Peek();
    if (c >= 0) ++pos_;
    return c;
  }
  bool Refill() {
    if (eof_) return false;
    consumed_ += static_cast<int64_t>(end_);
    const int64_t n = read_(buffer_.data(), buffer_.size());
    pos_ = 0;
    end_ = n > 0 ? static_cast<size_t>(n) : 0;
    if (n <= 0) eof_ = true;
    return n > 0;
  }
  int64_t Offset() const { return consumed_ + static_cast<int64_t>(pos_); }
  int SkipSpace() {
    while (true) {
      while (pos_ < end_) {
        const char c = buffer_[pos_];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return static_cast<unsigned char>(c);
        ++pos_;
      }
      if (!Refill()) return -1;
    }
  }

  void Fail(std::string message, bool at_end = false) {
    if (!error_) error_ = JsonStreamError{Offset(), std::move(message), at_end || eof_};
  }
  void FailFound(const char* expected, int c) {
    Fail(fmt::format("expected {}, found {}", expected, Shown(c)), c < 0);
  }

  // After the opening quote. Returns false on an error (already recorded).
  bool ReadString(std::string_view& out);
  bool ReadNumber();
  bool ReadLiteral(int first);
  bool Value(int c);
  void AfterValue() { expect_ = stack_.empty() ? Expect::kDone : Expect::kCommaOrEnd; }

  const ChunkReader& read_;
  JsonHandler& handler_;
  size_t max_depth_;
  std::vector<char> buffer_;
  size_t pos_ = 0, end_ = 0;
  int64_t consumed_ = 0;
  bool eof_ = false;
  std::vector<char> stack_;  // '{' or '['
  Expect expect_ = Expect::kValue;
  std::string scratch_;
  std::optional<JsonStreamError> error_;
};

bool Reader::ReadString(std::string_view& out) {
  // Fast path: the closing quote is in this chunk and nothing before it is escaped (memchr is
  // vectorised; a control character is caught on the slow path only when an escape sends the
  // string there, a leniency that cannot change a figure).
  const char* begin = buffer_.data() + pos_;
  const size_t left = end_ - pos_;
  if (const void* quote = std::memchr(begin, '"', left); quote != nullptr) {
    const auto length = static_cast<size_t>(static_cast<const char*>(quote) - begin);
    if (std::memchr(begin, '\\', length) == nullptr) {
      out = std::string_view(begin, length);
      pos_ += length + 1;
      return true;
    }
  }
  scratch_.clear();
  while (true) {
    const int c = Next();
    if (c < 0) {
      Fail("the input ends inside a string", true);
      return false;
    }
    if (c == '"') break;
    if (c < 0x20) {
      --pos_;
      Fail(fmt::format("control character {} inside a string", Shown(c)));
      return false;
    }
    if (c != '\\') {
      scratch_ += static_cast<char>(c);
      continue;
    }
    const int e = Next();
    switch (e) {
      case '"':
        scratch_ += '"';
        break;
      case '\\':
        scratch_ += '\\';
        break;
      case '/':
        scratch_ += '/';
        break;
      case 'b':
        scratch_ += '\b';
        break;
      case 'f':
        scratch_ += '\f';
        break;
      case 'n':
        scratch_ += '\n';
        break;
      case 'r':
        scratch_ += '\r';
        break;
      case 't':
        scratch_ += '\t';
        break;
      case 'u': {
        uint32_t cp = 0;
        for (int i = 0; i < 4; ++i) {
          const int h = Next();
          const int v = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
          if (v < 0) {
            if (h >= 0) --pos_;
            FailFound("4 hex digits after \\u", h);
            return false;
          }
          cp = cp * 16 + static_cast<uint32_t>(v);
        }
        AppendUtf8(cp, scratch_);  // lone surrogates pass through; names are compared, not shown
        break;
      }
      default:
        if (e >= 0) --pos_;
        FailFound("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", e);
        return false;
    }
  }
  out = scratch_;
  return true;
}

bool Reader::ReadNumber() {
  char text[kMaxNumberChars + 1];
  size_t n = 0;
  bool is_float = false;
  while (true) {
    const int c = Peek();
    const bool digit = c >= '0' && c <= '9';
    if (!(digit || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) break;
    if (!digit && c != '-') is_float = true;
    if (n == kMaxNumberChars) {
      Fail(fmt::format("a number longer than {} characters", kMaxNumberChars));
      return false;
    }
    text[n++] = static_cast<char>(c);
    ++pos_;
  }
  text[n] = '\0';
  const char* first = text[0] == '-' ? text + 1 : text;
  if (*first < '0' || *first > '9') {
    Fail(fmt::format("'{}' is not a number", std::string_view(text, n)));
    return false;
  }
  if (!is_float) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text, text + n, v);
    if (ec == std::errc() && end == text + n) {
      handler_.Integer(v);
      return true;
    }
  }
  double d = 0;
  auto [end, ec] = std::from_chars(text, text + n, d);
  if (end != text + n || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    Fail(fmt::format("'{}' is not a number", std::string_view(text, n)));
    return false;
  }
  handler_.Float(d);
  return true;
}

bool Reader::ReadLiteral(int first) {
  const char* word = first == 't' ? "true" : first == 'f' ? "false" : "null";
  for (const char* p = word; *p; ++p) {
    const int c = Next();
    if (c != *p) {
      if (c >= 0) --pos_;  // point at the offending byte
      Fail(fmt::format("expected '{}', found {}", word, Shown(c)), c < 0);
      return false;
    }
  }
  handler_.Literal();
  return true;
}

bool Reader::Value(int c) {
  switch (c) {
    case '{':
    case '[':
      if (stack_.size() >= max_depth_) {
        Fail(fmt::format("nesting deeper than {} levels", max_depth_));
        return false;
      }
      ++pos_;
      stack_.push_back(static_cast<char>(c));
      if (c == '{') {
        handler_.StartObject();
        expect_ = Expect::kKeyOrEnd;
      } else {
        handler_.StartArray();
        expect_ = Expect::kValueOrEnd;
      }
      return true;
    case '"': {
      ++pos_;
      std::string_view s;
      if (!ReadString(s)) return false;
      handler_.String(s);
      AfterValue();
      return true;
    }
    case 't':
    case 'f':
    case 'n':
      if (!ReadLiteral(c)) return false;
      AfterValue();
      return true;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) {
        if (!ReadNumber()) return false;
        AfterValue();
        return true;
      }
      FailFound("a value (object, array, string, number, true, false or null)", c);
      return false;
  }
}

std::optional<JsonStreamError> Reader::Run() {
  while (!error_) {
    const int c = SkipSpace();
    switch (expect_) {
      case Expect::kDone:
        if (c >= 0) FailFound("nothing after the document", c);
        return error_;
      case Expect::kValueOrEnd:
        if (c == ']') {
          ++pos_;
          stack_.pop_back();
          handler_.EndArray();
          AfterValue();
          break;
        }
        [[fallthrough]];
      case Expect::kValue:
        Value(c);
        break;
      case Expect::kKeyOrEnd:
        if (c == '}') {
          ++pos_;
          stack_.pop_back();
          handler_.EndObject();
          AfterValue();
          break;
        }
        [[fallthrough]];
      case Expect::kKey: {
        if (c != '"') {
          FailFound("a key in quotes", c);
          break;
        }
        ++pos_;
        std::string_view key;
        if (!ReadString(key)) break;
        handler_.Key(key);
        expect_ = Expect::kColon;
        break;
      }
      case Expect::kColon:
        if (c != ':') {
          FailFound("':' after a key", c);
          break;
        }
        ++pos_;
        expect_ = Expect::kValue;
        break;
      case Expect::kCommaOrEnd: {
        const char close = stack_.back() == '{' ? '}' : ']';
        if (c == ',') {
          ++pos_;
          expect_ = stack_.back() == '{' ? Expect::kKey : Expect::kValue;
        } else if (c == close) {
          ++pos_;
          stack_.pop_back();
          if (close == '}') {
            handler_.EndObject();
          } else {
            handler_.EndArray();
          }
          AfterValue();
        } else {
          FailFound(close == '}' ? "',' or '}' after an object member"
                                 : "',' or ']' after an array element",
                    c);
        }
        break;
      }
    }
  }
  return error_;
}

}  // namespace

std::optional<JsonStreamError> ReadJsonStream(const ChunkReader& read, JsonHandler& handler,
                                              size_t max_depth) {
  Reader reader(read, handler, max_depth);
  return reader.Run();
}

}  // namespace strata::profile
