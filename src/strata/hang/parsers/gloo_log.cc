#include "strata/hang/parsers/gloo_log.h"

#include <algorithm>

#include "strata/core/text_scan.h"
#include "strata/hang/parsers/log_signals.h"

namespace strata::hang {
namespace {

constexpr size_t kMaxText = 300;

std::string Trimmed(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, std::min<size_t>(b - a + 1, kMaxText)));
}

// The message from `at` to its end: a closing quote and parenthesis of the Python repr
// ("...complete')") are the exception's wrapping, not Gloo's words.
std::string MessageFrom(std::string_view line, size_t at) {
  std::string_view m = line.substr(at);
  while (!m.empty() && (m.back() == ' ' || m.back() == '\r' || m.back() == ')' ||
                        m.back() == '\'' || m.back() == '"')) {
    m.remove_suffix(1);
  }
  return std::string(m.substr(0, kMaxText));
}

// "[127.0.0.1]:13480" or "[2401:db00::1]:8594" at the start of `s` -> "127.0.0.1:13480".
std::string BracketedPeer(std::string_view s) {
  if (s.empty() || s.front() != '[') return "";
  const size_t close = s.find(']');
  if (close == std::string_view::npos) return "";
  std::string peer(s.substr(1, close - 1));
  std::string_view rest = s.substr(close + 1);
  if (!rest.empty() && rest.front() == ':') {
    rest.remove_prefix(1);
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits > 0) peer += ":" + std::string(rest.substr(0, digits));
  }
  return peer;
}

// "Timed out waiting 8000ms for recv operation to complete": timeout and operation, if the
// line says exactly that (a log line merely quoting "Timed out waiting" is not Gloo's).
bool ReadTimeout(std::string_view line, GlooSignal& s) {
  static constexpr std::string_view kHead = "Timed out waiting ";
  const size_t at = line.find(kHead);
  if (at == std::string_view::npos) return false;
  std::string_view rest = line.substr(at + kHead.size());
  size_t consumed = 0;
  const auto ms = LeadingInt(rest, &consumed);
  if (!ms || *ms < 0 || consumed == 0) return false;
  rest.remove_prefix(consumed);
  static constexpr std::string_view kFor = "ms for ";
  if (rest.substr(0, kFor.size()) != kFor) return false;
  rest.remove_prefix(kFor.size());
  const size_t space = rest.find(' ');
  if (space == std::string_view::npos || !rest.substr(space).starts_with(" operation to complete"))
    return false;
  s.kind = GlooSignalKind::kTimeout;
  s.timeout_ms = *ms;
  s.operation = std::string(rest.substr(0, space));
  s.detail = MessageFrom(line, at);
  return true;
}

bool ReadPeerLeft(std::string_view line, GlooSignal& s) {
  static constexpr std::string_view kClosed = "Connection closed by peer [";
  static constexpr std::string_view kRead = "Read error [";
  if (const size_t at = line.find(kClosed); at != std::string_view::npos) {
    s.peer = BracketedPeer(line.substr(at + kClosed.size() - 1));
    s.kind = GlooSignalKind::kPeerLeft;
    s.detail = MessageFrom(line, at);
    return true;
  }
  const size_t at = line.find(kRead);
  if (at == std::string_view::npos ||
      line.find("Connection reset by peer", at) == std::string_view::npos) {
    return false;
  }
  s.peer = BracketedPeer(line.substr(at + kRead.size() - 1));
  s.kind = GlooSignalKind::kPeerLeft;
  s.detail = MessageFrom(line, at);
  return true;
}

bool ReadSizeMismatch(std::string_view line, GlooSignal& s) {
  // Gloo before the sentence was added enforces only "op.preamble.length <= op.nbytes. 1046204
  // vs 1040256" (PrimeIntellect-ai/prime-diloco#68): a peer sent more bytes than this rank
  // posted for the same exchange, the same disagreement.
  if (line.find("Received data size doesn't match expected size") == std::string_view::npos &&
      line.find("op.preamble.length <= op.nbytes") == std::string_view::npos)
    return false;
  s.kind = GlooSignalKind::kSizeMismatch;
  const size_t enforce = line.find("op.preamble");
  s.detail = MessageFrom(
      line, enforce == std::string_view::npos ? line.find("Received data size") : enforce);
  return true;
}

}  // namespace

std::vector<GlooSignal> ScanGlooLog(std::string_view text, const std::string& file) {
  std::vector<GlooSignal> out;
  ForEachLine(text, [&](const TextLine& l) {
    const std::string_view line = l.text;
    GlooSignal s;
    if (!ReadTimeout(line, s) && !ReadPeerLeft(line, s) && !ReadSizeMismatch(line, s)) return;
    s.global_rank = RankPrefix(line);
    s.file = file;
    s.line = l.number;
    s.text = Trimmed(line);
    out.push_back(std::move(s));
  });
  return out;
}

std::string_view GlooSignalKindName(GlooSignalKind kind) {
  switch (kind) {
    case GlooSignalKind::kTimeout:
      return "timeout";
    case GlooSignalKind::kPeerLeft:
      return "peer_left";
    case GlooSignalKind::kSizeMismatch:
      return "size_mismatch";
  }
  return "timeout";
}

}  // namespace strata::hang
