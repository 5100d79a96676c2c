#include "strata/hang/parsers/pickle_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata::hang {
namespace {

using nlohmann::json;

// The decoder builds a graph of nodes first and converts it to JSON at STOP, because pickles
// mutate containers after memoizing them (Python writes EMPTY_DICT, BINPUT, then SETITEMS), so a
// later BINGET must see the filled container: memo entries are node indices, not copies.
enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict, kCallable };

struct Node {
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0.0;
  std::string text;             // kString; kCallable: "module.name"
  std::vector<uint32_t> items;  // kList, kTuple: elements; kDict: key, value, key, value, ...
};

Node MakeNode(Kind kind) {
  Node node;
  node.kind = kind;
  return node;
}

// The only callables accepted: torch.jit._pickle functions that older torch (before the pickler's
// tag_aggregates flag) wraps around plain values. Each returns its first argument unchanged.
bool IsIdentityFunction(std::string_view qualified_name) {
  return qualified_name == "torch.jit._pickle.restore_type_tag" ||
         qualified_name == "torch.jit._pickle.build_intlist" ||
         qualified_name == "torch.jit._pickle.build_boollist" ||
         qualified_name == "torch.jit._pickle.build_doublelist";
}

constexpr std::string_view kOnlyPlainValues =
    "expected only dicts, lists, tuples, strings, numbers, booleans and None (a pickle that "
    "names a Python object could run code when loaded, so strata never builds one)";

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t extra = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      code = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      code = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      code = c & 0x07u;
    } else
      return false;
    if (i + extra >= s.size()) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      code = (code << 6) | (cc & 0x3Fu);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid UTF-8 too.
    if ((extra == 1 && code < 0x80) || (extra == 2 && code < 0x800) ||
        (extra == 3 && (code < 0x10000 || code > 0x10FFFF)) || (code >= 0xD800 && code <= 0xDFFF))
      return false;
    i += extra + 1;
  }
  return true;
}

class Decoder {
 public:
  Decoder(std::string_view in, const std::string& file, const PickleLimits& limits)
      : in_(in), file_(file), limits_(limits) {}

  Result<json> Run();

 private:
  Error Fail(size_t offset, const std::string& message) const {
    return InvalidInput(fmt::format("byte {}: {}", offset, message)).InFile(file_);
  }
  std::string OpLabel() const { return fmt::format("{} (0x{:02x})", PickleOpcodeName(op_), op_); }

  Status Step();
  Result<std::string_view> Take(size_t n, std::string_view what);
  Result<uint64_t> TakeLittleEndian(size_t n, std::string_view what);
  Result<uint32_t> Push(Node node);
  Status Add(Node node) {
    STRATA_RETURN_IF_ERROR(Push(std::move(node)));
    return OkStatus();
  }
  Status PushIndex(uint32_t index);
  Result<uint32_t> Pop();
  Result<size_t> PopMark();
  Status PushString(size_t length_bytes);
  Status PushLong(size_t length);
  Status AddItems(bool to_dict, bool pops_mark);
  Status PushSequence(Kind kind, size_t mark);
  Status PushGlobal(std::string_view module, std::string_view name);
  Status Reduce();
  Status Memoize(uint64_t index);
  Status Recall(uint64_t index);
  Result<json> ToJson(uint32_t index, size_t depth, size_t* values) const;
  Result<size_t> MeasureHeight(uint32_t index, size_t depth);

  std::string_view in_;
  const std::string& file_;
  const PickleLimits& limits_;
  size_t pos_ = 0;
  size_t op_offset_ = 0;
  unsigned char op_ = 0;
  bool stopped_ = false;
  std::vector<Node> nodes_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
  // Per node, filled by MeasureHeight: expanded element count and bytes (saturating), height.
  std::vector<size_t> expanded_size_;
  std::vector<size_t> expanded_bytes_;
  std::vector<size_t> height_;
  std::vector<uint8_t> visit_;  // 0 new, 1 in progress (a cycle if met again), 2 done
};

Result<std::string_view> Decoder::Take(size_t n, std::string_view what) {
  if (n > in_.size() - pos_) {
    return Fail(op_offset_, fmt::format("{} needs {} bytes of {} but the file ends after {}: the "
                                        "file is truncated",
                                        OpLabel(), n, what, in_.size() - pos_));
  }
  std::string_view out = in_.substr(pos_, n);
  pos_ += n;
  return out;
}

Result<uint64_t> Decoder::TakeLittleEndian(size_t n, std::string_view what) {
  STRATA_ASSIGN_OR_RETURN(std::string_view raw, Take(n, what));
  uint64_t value = 0;
  for (size_t i = n; i-- > 0;) value = (value << 8) | static_cast<unsigned char>(raw[i]);
  return value;
}

Result<uint32_t> Decoder::Push(Node node) {
  if (nodes_.size() >= limits_.max_values) {
    return Fail(op_offset_,
                fmt::format("more than {} values, the limit for one pickle", limits_.max_values));
  }
  nodes_.push_back(std::move(node));
  const auto index = static_cast<uint32_t>(nodes_.size() - 1);
  STRATA_RETURN_IF_ERROR(PushIndex(index));
  return index;
}

Status Decoder::PushIndex(uint32_t index) {
  if (stack_.size() >= limits_.max_values) {
    return Fail(op_offset_, fmt::format("more than {} values on the stack, the limit for one "
                                        "pickle",
                                        limits_.max_values));
  }
  stack_.push_back(index);
  return OkStatus();
}

Result<uint32_t> Decoder::Pop() {
  const size_t floor = marks_.empty() ? 0 : marks_.back();
  if (stack_.size() <= floor) {
    return Fail(op_offset_, fmt::format("{} needs a value but the stack is empty{}: the pickle is "
                                        "malformed",
                                        OpLabel(),
                                        marks_.empty() ? ""
                                                       : " above the "
                                                         "last MARK"));
  }
  const uint32_t top = stack_.back();
  stack_.pop_back();
  return top;
}

Result<size_t> Decoder::PopMark() {
  if (marks_.empty()) {
    return Fail(op_offset_, fmt::format("{} expected a MARK ('(') before it, found none: the "
                                        "pickle is malformed",
                                        OpLabel()));
  }
  const size_t mark = marks_.back();
  marks_.pop_back();
  return mark;
}

Status Decoder::PushString(size_t length_bytes) {
  STRATA_ASSIGN_OR_RETURN(const uint64_t length, TakeLittleEndian(length_bytes, "length"));
  if (length > in_.size() - pos_) {
    return Fail(op_offset_, fmt::format("{} announces a string of {} bytes but only {} bytes "
                                        "follow: the file is truncated or corrupt",
                                        OpLabel(), length, in_.size() - pos_));
  }
  STRATA_ASSIGN_OR_RETURN(std::string_view text, Take(static_cast<size_t>(length), "text"));
  if (!IsValidUtf8(text)) {
    return Fail(op_offset_, fmt::format("{} holds a string that is not valid UTF-8", OpLabel()));
  }
  Node node;
  node.kind = Kind::kString;
  node.text = std::string(text);
  return Add(std::move(node));
}

Status Decoder::PushLong(size_t length) {
  // LONG1/LONG4 hold a little-endian two's-complement integer; torch uses 8 bytes for int64.
  if (length > 8) {
    return Fail(op_offset_, fmt::format("{} holds an integer of {} bytes, expected at most 8 (a "
                                        "64-bit integer)",
                                        OpLabel(), length));
  }
  STRATA_ASSIGN_OR_RETURN(uint64_t raw, TakeLittleEndian(length, "integer"));
  if (length > 0 && length < 8 && (raw >> (8 * length - 1)) != 0) {
    raw |= ~uint64_t{0} << (8 * length);  // sign-extend a negative short integer
  }
  Node node;
  node.kind = Kind::kInt;
  node.integer = static_cast<int64_t>(raw);
  return Add(std::move(node));
}

// SETITEMS / SETITEM / APPENDS / APPEND / ADDITEMS: add stack values to the container below them.
Status Decoder::AddItems(bool to_dict, bool pops_mark) {
  size_t first = 0;
  if (pops_mark) {
    STRATA_ASSIGN_OR_RETURN(first, PopMark());
  } else {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    const size_t needed = to_dict ? 2 : 1;
    if (stack_.size() < floor + needed) {
      return Fail(op_offset_, fmt::format("{} needs {} values on the stack, found {}: the pickle "
                                          "is malformed",
                                          OpLabel(), needed, stack_.size() - floor));
    }
    first = stack_.size() - needed;
  }
  const size_t floor = marks_.empty() ? 0 : marks_.back();
  if (first == 0 || first - 1 < floor) {
    return Fail(op_offset_, fmt::format("{} found no container below its values", OpLabel()));
  }
  Node& target = nodes_[stack_[first - 1]];
  const Kind expected = to_dict ? Kind::kDict : Kind::kList;
  if (target.kind != expected) {
    return Fail(op_offset_, fmt::format("{} expected a {} below its values", OpLabel(),
                                        to_dict ? "dict" : "list"));
  }
  const size_t count = stack_.size() - first;
  if (to_dict && count % 2 != 0) {
    return Fail(op_offset_,
                fmt::format("{} found {} values, expected key/value pairs", OpLabel(), count));
  }
  for (size_t i = first; i < stack_.size(); ++i) {
    if (to_dict && (i - first) % 2 == 0) {
      const Kind key_kind = nodes_[stack_[i]].kind;
      if (key_kind != Kind::kString && key_kind != Kind::kInt) {
        return Fail(op_offset_, fmt::format("{} has a dict key that is not a string or an "
                                            "integer",
                                            OpLabel()));
      }
    }
    target.items.push_back(stack_[i]);
  }
  stack_.resize(first);
  return OkStatus();
}

Status Decoder::PushSequence(Kind kind, size_t mark) {
  Node node;
  node.kind = kind;
  node.items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
  stack_.resize(mark);
  if (kind == Kind::kDict) {
    if (node.items.size() % 2 != 0) {
      return Fail(op_offset_, fmt::format("{} found {} values, expected key/value pairs", OpLabel(),
                                          node.items.size()));
    }
    for (size_t i = 0; i < node.items.size(); i += 2) {
      const Kind key_kind = nodes_[node.items[i]].kind;
      if (key_kind != Kind::kString && key_kind != Kind::kInt) {
        return Fail(op_offset_, fmt::format("{} has a dict key that is not a string or an "
                                            "integer",
                                            OpLabel()));
      }
    }
  }
  return Add(std::move(node));
}

Status Decoder::PushGlobal(std::string_view module, std::string_view name) {
  const std::string qualified = fmt::format("{}.{}", module, name);
  if (!IsIdentityFunction(qualified)) {
    return Fail(op_offset_,
                fmt::format("{} imports '{}'; {}", OpLabel(), qualified, kOnlyPlainValues));
  }
  Node node;
  node.kind = Kind::kCallable;
  node.text = qualified;
  return Add(std::move(node));
}

Status Decoder::Reduce() {
  STRATA_ASSIGN_OR_RETURN(const uint32_t args, Pop());
  STRATA_ASSIGN_OR_RETURN(const uint32_t callable, Pop());
  if (nodes_[callable].kind != Kind::kCallable) {
    return Fail(op_offset_,
                fmt::format("{} calls something that is not an accepted torch function; "
                            "{}",
                            OpLabel(), kOnlyPlainValues));
  }
  const Node& arguments = nodes_[args];
  if (arguments.kind != Kind::kTuple || arguments.items.empty()) {
    return Fail(op_offset_, fmt::format("{} expected an argument tuple for '{}'", OpLabel(),
                                        nodes_[callable].text));
  }
  return PushIndex(arguments.items[0]);
}

Status Decoder::Memoize(uint64_t index) {
  if (stack_.empty()) {
    return Fail(op_offset_, fmt::format("{} has nothing to store: the stack is empty", OpLabel()));
  }
  if (memo_.size() >= limits_.max_values && !memo_.contains(index)) {
    return Fail(op_offset_, fmt::format("more than {} memo entries", limits_.max_values));
  }
  memo_[index] = stack_.back();
  return OkStatus();
}

Status Decoder::Recall(uint64_t index) {
  const auto it = memo_.find(index);
  if (it == memo_.end()) {
    return Fail(op_offset_, fmt::format("{} refers to memo entry {}, which was never stored: the "
                                        "pickle is corrupt",
                                        OpLabel(), index));
  }
  return PushIndex(it->second);
}

Status Decoder::Step() {
  op_offset_ = pos_;
  op_ = static_cast<unsigned char>(in_[pos_++]);
  switch (op_) {
    case 0x80: {  // PROTO
      STRATA_ASSIGN_OR_RETURN(const uint64_t protocol, TakeLittleEndian(1, "protocol"));
      if (protocol < 2 || protocol > 5) {
        return Fail(op_offset_,
                    fmt::format("pickle protocol {}, expected 2 (torch) to 5", protocol));
      }
      return OkStatus();
    }
    case 0x95: {  // FRAME: protocol 4 framing, only a length to skip
      STRATA_ASSIGN_OR_RETURN(std::string_view ignored, Take(8, "frame length"));
      static_cast<void>(ignored);
      return OkStatus();
    }
    case '.':
      if (stack_.empty()) return Fail(op_offset_, "STOP (0x2e) with an empty stack");
      stopped_ = true;
      return OkStatus();
    case '(':
      if (marks_.size() >= limits_.max_depth) {
        return Fail(op_offset_,
                    fmt::format("MARKs nested deeper than {} levels", limits_.max_depth));
      }
      marks_.push_back(stack_.size());
      return OkStatus();
    case '}':
      return Add(MakeNode(Kind::kDict));
    case ']':
    case 0x8f:
      return Add(MakeNode(Kind::kList));  // EMPTY_SET: read as a list
    case ')':
      return Add(MakeNode(Kind::kTuple));
    case 'u':
      return AddItems(/*to_dict=*/true, /*pops_mark=*/true);
    case 's':
      return AddItems(/*to_dict=*/true, /*pops_mark=*/false);
    case 'e':
    case 0x90:
      return AddItems(/*to_dict=*/false, /*pops_mark=*/true);
    case 'a':
      return AddItems(/*to_dict=*/false, /*pops_mark=*/false);
    case 't':
    case 'l':
    case 'd':
    case 0x91: {
      STRATA_ASSIGN_OR_RETURN(const size_t mark, PopMark());
      const Kind kind = op_ == 't' ? Kind::kTuple : op_ == 'd' ? Kind::kDict : Kind::kList;
      return PushSequence(kind, mark);
    }
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1..3
      const size_t n = static_cast<size_t>(op_ - 0x84);
      const size_t floor = marks_.empty() ? 0 : marks_.back();
      if (stack_.size() < floor + n) {
        return Fail(op_offset_, fmt::format("{} needs {} values on the stack, found {}", OpLabel(),
                                            n, stack_.size() - floor));
      }
      return PushSequence(Kind::kTuple, stack_.size() - n);
    }
    case 'X':
      return PushString(4);
    case 0x8c:
      return PushString(1);
    case 0x8d:
      return PushString(8);
    case 'q': {
      STRATA_ASSIGN_OR_RETURN(const uint64_t i, TakeLittleEndian(1, "memo index"));
      return Memoize(i);
    }
    case 'r': {
      STRATA_ASSIGN_OR_RETURN(const uint64_t i, TakeLittleEndian(4, "memo index"));
      return Memoize(i);
    }
    case 0x94:
      return Memoize(memo_.size());
    case 'h': {
      STRATA_ASSIGN_OR_RETURN(const uint64_t i, TakeLittleEndian(1, "memo index"));
      return Recall(i);
    }
    case 'j': {
      STRATA_ASSIGN_OR_RETURN(const uint64_t i, TakeLittleEndian(4, "memo index"));
      return Recall(i);
    }
    case 'K':
    case 'M':
    case 'J': {
      const size_t n = op_ == 'K' ? 1 : op_ == 'M' ? 2 : 4;
      STRATA_ASSIGN_OR_RETURN(const uint64_t raw, TakeLittleEndian(n, "integer"));
      Node node = MakeNode(Kind::kInt);
      // BININT is a signed 32-bit value (torch writes -1 this way); the shorter forms are unsigned.
      node.integer = op_ == 'J'
                         ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(raw)))
                         : static_cast<int64_t>(raw);
      return Add(std::move(node));
    }
    case 0x8a: {
      STRATA_ASSIGN_OR_RETURN(const uint64_t n, TakeLittleEndian(1, "length"));
      return PushLong(static_cast<size_t>(n));
    }
    case 0x8b: {
      // A negative int32 length reads as a huge unsigned one; PushLong rejects it before reading.
      STRATA_ASSIGN_OR_RETURN(const uint64_t n, TakeLittleEndian(4, "length"));
      return PushLong(static_cast<size_t>(n));
    }
    case 'G': {  // BINFLOAT: big-endian IEEE 754 double
      STRATA_ASSIGN_OR_RETURN(std::string_view raw, Take(8, "float"));
      uint64_t bits = 0;
      for (char c : raw) bits = (bits << 8) | static_cast<unsigned char>(c);
      Node node = MakeNode(Kind::kFloat);
      node.real = std::bit_cast<double>(bits);
      return Add(std::move(node));
    }
    case 0x88:
    case 0x89: {
      Node node = MakeNode(Kind::kBool);
      node.boolean = op_ == 0x88;
      return Add(std::move(node));
    }
    case 'N':
      return Add(MakeNode(Kind::kNone));
    case '0': {
      STRATA_ASSIGN_OR_RETURN(const uint32_t ignored, Pop());
      static_cast<void>(ignored);
      return OkStatus();
    }
    case '1': {
      STRATA_ASSIGN_OR_RETURN(const size_t mark, PopMark());
      stack_.resize(mark);
      return OkStatus();
    }
    case '2':
      if (stack_.empty()) return Fail(op_offset_, "DUP (0x32) with an empty stack");
      return PushIndex(stack_.back());
    case 'c': {  // GLOBAL "module\nname\n": read both lines (bounded) to name them in the error
      std::string_view parts[2];
      for (auto& part : parts) {
        const size_t end = in_.find('\n', pos_);
        if (end == std::string_view::npos || end - pos_ > 256) {
          return Fail(op_offset_,
                      fmt::format("{} expected 'module\\nname\\n' within 256 bytes", OpLabel()));
        }
        part = in_.substr(pos_, end - pos_);
        pos_ = end + 1;
      }
      return PushGlobal(parts[0], parts[1]);
    }
    case 0x93: {  // STACK_GLOBAL
      STRATA_ASSIGN_OR_RETURN(const uint32_t name, Pop());
      STRATA_ASSIGN_OR_RETURN(const uint32_t module, Pop());
      if (nodes_[name].kind != Kind::kString || nodes_[module].kind != Kind::kString) {
        return Fail(op_offset_, fmt::format("{} expected two strings", OpLabel()));
      }
      return PushGlobal(nodes_[module].text, nodes_[name].text);
    }
    case 'R':
      return Reduce();
    default:
      break;
  }
  const std::string_view name = PickleOpcodeName(op_);
  if (name.empty()) {
    return Fail(op_offset_, fmt::format("0x{:02x} is not a pickle opcode: the file is corrupt or "
                                        "not a pickle",
                                        op_));
  }
  return Fail(op_offset_,
              fmt::format("opcode {} is not accepted; {}", OpLabel(), kOnlyPlainValues));
}

Result<json> Decoder::ToJson(uint32_t index, size_t depth, size_t* values) const {
  if (++*values > limits_.max_values) {
    return Fail(op_offset_, fmt::format("the decoded value has more than {} elements (shared "
                                        "values count each time they are used)",
                                        limits_.max_values));
  }
  if (depth > limits_.max_depth) {
    return Fail(op_offset_, fmt::format("values nested deeper than {} levels (or a container "
                                        "that contains itself)",
                                        limits_.max_depth));
  }
  const Node& node = nodes_[index];
  switch (node.kind) {
    case Kind::kNone:
      return json(nullptr);
    case Kind::kBool:
      return json(node.boolean);
    case Kind::kInt:
      return json(node.integer);
    case Kind::kFloat:
      return json(node.real);
    case Kind::kString:
      return json(node.text);
    case Kind::kCallable:
      return Fail(op_offset_, fmt::format("'{}' is referenced but never applied; {}", node.text,
                                          kOnlyPlainValues));
    case Kind::kList:
    case Kind::kTuple: {
      json out = json::array();
      for (uint32_t item : node.items) {
        STRATA_ASSIGN_OR_RETURN(json value, ToJson(item, depth + 1, values));
        out.push_back(std::move(value));
      }
      return out;
    }
    case Kind::kDict: {
      json out = json::object();
      for (size_t i = 0; i + 1 < node.items.size(); i += 2) {
        const Node& key = nodes_[node.items[i]];
        STRATA_ASSIGN_OR_RETURN(json value, ToJson(node.items[i + 1], depth + 1, values));
        out[key.kind == Kind::kString ? key.text : std::to_string(key.integer)] = std::move(value);
      }
      return out;
    }
  }
  return Fail(op_offset_, "internal: unknown node kind");
}

// What one decoded value costs besides its text: the size of a JSON value.
constexpr size_t kValueBytes = sizeof(json);
constexpr size_t kSaturated = size_t{1} << 62;

// Before building any JSON, measure what the graph expands to, in time linear in the graph: a
// few hundred bytes of memo references can describe 2^40 values or a list that contains itself.
Result<size_t> Decoder::MeasureHeight(uint32_t index, size_t depth) {
  const bool too_deep = visit_[index] == 2 ? depth + height_[index] > limits_.max_depth
                                           : depth > limits_.max_depth || visit_[index] == 1;
  if (too_deep) {
    return Fail(op_offset_, fmt::format("values nested deeper than {} levels (or a container "
                                        "that contains itself)",
                                        limits_.max_depth));
  }
  if (visit_[index] == 2) return height_[index];
  visit_[index] = 1;
  size_t size = 1, height = 0;
  const Node& node = nodes_[index];
  size_t bytes = kValueBytes + node.text.size();
  const bool is_dict = node.kind == Kind::kDict;
  for (size_t i = 0; i < node.items.size(); ++i) {
    const uint32_t child = node.items[i];
    if (is_dict && i % 2 == 0) {  // keys are strings or integers, leaves: only their text counts
      const Node& key = nodes_[child];
      const size_t key_bytes =
          key.kind == Kind::kInt ? std::to_string(key.integer).size() : key.text.size();
      bytes = std::min(bytes + kValueBytes + key_bytes, kSaturated);
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(const size_t child_height, MeasureHeight(child, depth + 1));
    height = std::max(height, child_height + 1);
    size = std::min(size + expanded_size_[child], limits_.max_values + 1);
    bytes = std::min(bytes + expanded_bytes_[child], kSaturated);
  }
  visit_[index] = 2;
  expanded_size_[index] = size;
  expanded_bytes_[index] = bytes;
  height_[index] = height;
  return height;
}

Result<json> Decoder::Run() {
  if (in_.size() > limits_.max_input_bytes) {
    return InvalidInput(fmt::format("the pickle is {} bytes, over the limit of {} bytes",
                                    in_.size(), limits_.max_input_bytes))
        .InFile(file_);
  }
  if (in_.empty()) return InvalidInput("the file is empty, expected a pickle").InFile(file_);
  while (!stopped_) {
    if (pos_ >= in_.size()) {
      return Fail(pos_, "the pickle ends without its STOP opcode ('.'): the file is truncated");
    }
    STRATA_RETURN_IF_ERROR(Step());
  }
  expanded_size_.assign(nodes_.size(), 0);
  expanded_bytes_.assign(nodes_.size(), 0);
  height_.assign(nodes_.size(), 0);
  visit_.assign(nodes_.size(), 0);
  STRATA_ASSIGN_OR_RETURN(const size_t height, MeasureHeight(stack_.back(), 0));
  static_cast<void>(height);
  if (expanded_size_[stack_.back()] > limits_.max_values) {
    return Fail(op_offset_, fmt::format("the decoded value has more than {} elements (shared "
                                        "values count each time they are used)",
                                        limits_.max_values));
  }
  const size_t scaled = limits_.max_expansion != 0 && in_.size() > SIZE_MAX / limits_.max_expansion
                            ? SIZE_MAX
                            : in_.size() * limits_.max_expansion;
  const size_t budget =
      std::min(limits_.max_decoded_bytes, std::max(limits_.min_decoded_bytes, scaled));
  if (expanded_bytes_[stack_.back()] > budget) {
    return Fail(
        op_offset_,
        fmt::format("the decoded value would take {} bytes, over the limit of "
                    "{} bytes ({} times the pickle's size, at least {}, at most {}; shared "
                    "strings count each time they are used)",
                    std::min(expanded_bytes_[stack_.back()], kSaturated - 1), budget,
                    limits_.max_expansion, limits_.min_decoded_bytes, limits_.max_decoded_bytes));
  }
  size_t values = 0;
  return ToJson(stack_.back(), 0, &values);
}

}  // namespace

Result<std::string> ReadPickle(std::string_view bytes, const std::string& file,
                               const PickleLimits& limits) {
  STRATA_ASSIGN_OR_RETURN(const json value, Decoder(bytes, file, limits).Run());
  // Strings were checked for UTF-8 while decoding; `replace` only guards the dump itself.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace strata::hang
