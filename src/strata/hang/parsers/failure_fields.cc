#include "strata/hang/parsers/failure_fields.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang::failure_fields {
namespace {

// "ALLREDUCE, TensorShape=..." or "REDUCE)." -> the op name: capitals, digits and underscores.
std::string OpName(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (std::isupper(static_cast<unsigned char>(s[n])) ||
                          std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '_')) {
    ++n;
  }
  return std::string(s.substr(0, n));
}

}  // namespace

std::string_view UnwrapMarkdownLinks(std::string_view line, std::string& buffer) {
  if (line.find("](http") == std::string_view::npos) return line;
  buffer.clear();
  buffer.reserve(line.size());
  size_t copied = 0;  // line[copied..] is not yet in buffer
  size_t at = 0;
  while ((at = line.find("](http", at)) != std::string_view::npos) {
    // The text: back to the nearest '[' with no bracket between; the target: up to the ')' with
    // no space inside ("(http://x/)"); else this is no link and stays as it is.
    size_t open = at;
    while (open > copied && line[open - 1] != '[' && line[open - 1] != ']') --open;
    const size_t close = line.find(')', at + 2);
    const bool link = open > copied && line[open - 1] == '[' && close != std::string_view::npos &&
                      line.substr(at + 2, close - at - 2).find(' ') == std::string_view::npos;
    if (!link) {
      at += 6;
      continue;
    }
    buffer.append(line.substr(copied, open - 1 - copied));
    buffer.append(line.substr(open, at - open));
    copied = close + 1;
    at = copied;
  }
  buffer.append(line.substr(copied));
  return buffer;
}

// Without ANSI escape sequences, markdown links (their text kept) and CR, trimmed.
std::string Clean(std::string_view raw) {
  std::string buffer;
  std::string links;
  std::string out(UnwrapMarkdownLinks(StripAnsiEscapes(raw, buffer), links));
  std::erase(out, '\r');
  return std::string(TrimSpace(out));
}

// The token after `key` up to '<' (NCCL's "<port>"), a space, a comma or a quote.
std::string TokenAfter(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return "";
  std::string_view rest = s.substr(at + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const size_t end = rest.find_first_of("< ,'\"");
  return std::string(rest.substr(0, end));
}

// "[PG ID 0 PG GUID 0(default_pg) Rank 2]", "[PG 1 Rank 1]", "[PG 0 (default_pg) Rank 0]" or
// "[Rank 6]": the PG-local rank and the group id.
void ReadPgRank(std::string_view line, FailureSignal* s) {
  size_t open = line.find("[PG ");
  if (open == std::string_view::npos) open = line.find("[Rank ");
  if (open == std::string_view::npos) return;
  const size_t close = line.find(']', open);
  if (close == std::string_view::npos || close - open > 120) return;
  const std::string_view inside = line.substr(open + 1, close - open - 1);
  s->pg_rank = IntAfter(inside, "Rank ");
  if (auto id = IntAfter(inside, "PG ID ")) {
    s->pg_id = std::to_string(*id);
    // torch >= 2.4 numbers the groups ("PG ID"), the default one always "PG ID 0 PG GUID
    // 0(default_pg)"; the rank after it is the process's rank inside that group. Inside another
    // group ("[PG ID 2 PG GUID 3 Rank 2]", vLLM's tensor-parallel group, vllm-project/vllm#20170)
    // it is no global rank: a line without torchrun's "[rankN]:" speaks for no rank. (The older
    // "[PG 1 Rank 1]" marks no default group and is read as before.)
    if (*id != 0 && inside.find("default_pg") == std::string_view::npos) s->pg_rank.reset();
  } else if (auto pg = IntAfter(inside, "PG ")) {
    s->pg_id = std::to_string(*pg);
  }
}

std::optional<int64_t> HorovodRunnerRank(std::string_view line) {
  if (!line.starts_with('[')) return std::nullopt;
  const size_t close = line.find("]<std");
  if (close == std::string_view::npos || close < 2 || close > 8) return std::nullopt;
  const std::string_view digits = line.substr(1, close - 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const std::string_view rest = line.substr(close + 1);
  if (!rest.starts_with("<stderr>:") && !rest.starts_with("<stdout>:")) return std::nullopt;
  return LeadingInt(digits);
}

// "<host>:<pid>:<tid> [dev] ..." after any launcher prefix: the host.
std::string NcclHost(std::string_view line) {
  const size_t nccl = line.find(" NCCL ");
  if (nccl == std::string_view::npos) return "";
  std::string_view head = line.substr(0, nccl);
  const size_t dev = head.rfind(" [");
  if (dev == std::string_view::npos) return "";
  head = head.substr(0, dev);
  if (const size_t sp = head.rfind(' '); sp != std::string_view::npos) head.remove_prefix(sp + 1);
  if (const size_t br = head.rfind("]:"); br != std::string_view::npos) head.remove_prefix(br + 2);
  const size_t c1 = head.find(':');
  if (c1 == std::string_view::npos || head.find(':', c1 + 1) == std::string_view::npos) return "";
  return std::string(head.substr(0, c1));
}

// "{3, 4, 5}" -> ranks.
std::vector<int64_t> RankSet(std::string_view s) {
  std::vector<int64_t> out;
  const size_t open = s.find('{');
  const size_t close = s.find('}', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return out;
  std::string_view inside = s.substr(open + 1, close - open - 1);
  while (!inside.empty() && out.size() < 100000) {
    size_t used = 0;
    const auto r = LeadingInt(inside, &used);
    if (!r) break;
    out.push_back(*r);
    inside.remove_prefix(used);
    while (!inside.empty() && (inside.front() == ',' || inside.front() == ' '))
      inside.remove_prefix(1);
  }
  return out;
}

bool SglangWorkerException(std::string_view line, std::optional<int64_t>* tp_rank) {
  if (!line.starts_with('[')) return false;
  const size_t close = line.find("] ");
  if (close == std::string_view::npos || close > 48) return false;
  const std::string_view message = line.substr(close + 2);
  if (!message.starts_with("Exception in run_tp_server:") &&
      !message.starts_with("Scheduler hit an exception:"))
    return false;
  const std::string_view prefix = line.substr(1, close - 1);
  const size_t tp = prefix.rfind(" TP");
  if (tp == std::string_view::npos) return false;
  tp_rank->reset();
  const bool other_dimension =
      Contains(prefix, " DP") || Contains(prefix, " PP") || Contains(prefix, " EP");
  size_t used = 0;
  const auto rank = LeadingInt(prefix.substr(tp + 3), &used);
  if (rank && tp + 3 + used == prefix.size() && !other_dimension) *tp_rank = rank;
  return true;
}

// ProcessGroupWrapper's report: "Rank 1 is running collective: CollectiveFingerPrint(
// SequenceNumber=21, OpType=BROADCAST, ...), but Rank 0 is running collective:
// CollectiveFingerPrint(SequenceNumber=21OpType=ALLREDUCE)" (the second side may lack its comma
// or be cut off by a paste). Older torch prints "but Rank 1 is running collective: REDUCE.".
void ReadDetailMismatch(std::string_view line, FailureSignal* s) {
  const size_t first = line.find("Rank ", line.find("Detected mismatch"));
  const size_t but = line.find("but Rank ");
  const std::string_view a = line.substr(
      first == std::string_view::npos ? line.size() : first,
      but == std::string_view::npos || but < first ? std::string_view::npos : but - first);
  const std::string_view b = but == std::string_view::npos ? "" : line.substr(but + 4);
  if (auto r = IntAfter(a, "Rank ")) s->ranks.push_back(*r);
  s->seq = IntAfter(a, "SequenceNumber=");
  if (const size_t op = a.find("OpType="); op != std::string_view::npos)
    s->op = OpName(a.substr(op + 7));
  if (auto r = IntAfter(b, "Rank ")) s->ranks.push_back(*r);
  s->other_seq = IntAfter(b, "SequenceNumber=");
  if (const size_t op = b.find("OpType="); op != std::string_view::npos) {
    s->other_op = OpName(b.substr(op + 7));
  } else if (const size_t colon = b.find("collective: "); colon != std::string_view::npos) {
    s->other_op = OpName(b.substr(colon + 12));
  }
  const size_t aspects = line.find("differ in the following aspects:");
  s->detail = aspects == std::string_view::npos
                  ? "the ranks run different collectives"
                  : std::string(TrimSpace(line.substr(aspects + 32, 120)));
}

// "failed to connect to 192.168.121.122:1040 (errno: 113 ...)" or "... to [::ffff:0.0.0.5]:40323":
// the host, without its port; the "to any network address of (host, port)" summary is skipped.
std::string StoreHost(std::string_view line) {
  // "failed to connect to [host]:port" and "... has timed out after 60s while trying to connect
  // to 192.0.0.1:1234" (pytorch/pytorch#107021); "(host, port)" where torch prints a tuple.
  for (const std::string_view key : {"failed to connect to ", "trying to connect to "}) {
    for (size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
      std::string_view rest = line.substr(at + key.size());
      if (rest.starts_with("any ")) continue;
      if (rest.starts_with('(')) rest.remove_prefix(1);
      rest = rest.substr(0, rest.find_first_of(" ,)"));
      if (rest.starts_with('[')) return std::string(rest.substr(1, rest.find(']') - 1));
      const size_t colon = rest.rfind(':');
      return std::string(colon == std::string_view::npos ? rest : rest.substr(0, colon));
    }
  }
  return "";
}

// "socketProgressOpt: Call to send to 10.44.137.149<52905> failed : Connection reset by peer"
// (NVIDIA/nccl#1920) or "Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe"
// (NVIDIA/nccl#795): the address the failed call went to or came from. NCCL 2.3's wrapper names
// the system call instead ("Call to " #op " failed : ...", NVIDIA/nccl#193, pytorch/pytorch#17703
// "Call to **write** failed"): the word after "Call to" is the call, and no peer is named.
std::string SocketPeer(std::string_view line) {
  const size_t failed = line.find(" failed");
  const std::string_view head = line.substr(0, failed);
  const size_t to = head.rfind(" to ");
  const size_t from = head.rfind(" from ");
  if (to == std::string_view::npos && from == std::string_view::npos) return "";
  const bool use_from =
      from != std::string_view::npos && (to == std::string_view::npos || from > to);
  if (!use_from && head.substr(0, to).ends_with("Call")) return "";
  return TokenAfter(head.substr(use_from ? from : to), use_from ? " from " : " to ");
}

// "pair.cc:799] connect [172.31.71.170]:13195: Connection refused" (pytorch/pytorch#108732).
std::string GlooConnectPeer(std::string_view line) {
  const size_t at = line.find("connect [");
  if (at == std::string_view::npos) return "";
  const std::string_view rest = line.substr(at + 9);
  const size_t close = rest.find(']');
  return close == std::string_view::npos ? "" : std::string(rest.substr(0, close));
}

std::optional<int64_t> TimedeltaMsAfter(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + key.size());
  // Two digits at the start of `rest`, what timedelta prints for minutes and seconds.
  const auto two_digits = [](std::string_view v) -> std::optional<int64_t> {
    if (v.size() < 2 || std::isdigit(static_cast<unsigned char>(v[0])) == 0 ||
        std::isdigit(static_cast<unsigned char>(v[1])) == 0) {
      return std::nullopt;
    }
    return (v[0] - '0') * 10 + (v[1] - '0');
  };
  size_t used = 0;
  auto n = LeadingInt(rest, &used);
  if (!n || *n < 0 || rest.front() == ' ') return std::nullopt;
  int64_t days = 0;
  if (rest.substr(used).starts_with(" day")) {  // "1 day, 2:00:00", "3 days, 0:00:00"
    days = *n;
    const size_t comma = rest.find(", ", used);
    if (comma == std::string_view::npos || comma > used + 6) return std::nullopt;
    rest.remove_prefix(comma + 2);
    n = LeadingInt(rest, &used);
    if (!n || *n < 0 || *n > 23) return std::nullopt;
  }
  const int64_t hours = *n;
  rest.remove_prefix(used);
  if (!rest.starts_with(':')) return std::nullopt;
  const auto minutes = two_digits(rest.substr(1));
  if (!minutes || rest.size() < 4 || rest[3] != ':') return std::nullopt;
  const auto seconds = two_digits(rest.substr(4));
  if (!seconds || *minutes > 59 || *seconds > 59) return std::nullopt;
  int64_t ms = (((days * 24 + hours) * 60 + *minutes) * 60 + *seconds) * 1000;
  // A fraction is printed as six digits of microseconds: ".500000" is 500 ms.
  if (rest.size() >= 13 && rest[6] == '.') {
    const auto micros = ParseInt64(rest.substr(7, 6));
    if (micros && *micros >= 0) ms += *micros / 1000;
  }
  return ms;
}

}  // namespace strata::hang::failure_fields
