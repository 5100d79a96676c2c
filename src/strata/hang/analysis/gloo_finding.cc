#include "strata/hang/analysis/gloo_finding.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "strata/hang/analysis/finding_reports.h"
#include "strata/hang/analysis/gloo_sequences.h"
#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {
namespace {

std::string Cite(const GlooSignal& s) {
  const size_t slash = s.file.rfind('/');
  return fmt::format("{}:{}: {}", slash == std::string::npos ? s.file : s.file.substr(slash + 1),
                     s.line, s.text);
}

std::vector<const GlooSignal*> Of(const EvidenceSet& ev, GlooSignalKind kind) {
  std::vector<const GlooSignal*> out;
  for (const GlooSignal& s : ev.gloo) {
    if (s.kind == kind) out.push_back(&s);
  }
  return out;
}

const PgStall* GlooStall(const Verdict& v) {
  for (const PgStall& s : v.pg_stalls) {
    if (s.source == kGlooSource) return &s;
  }
  return nullptr;
}

// Members with no dump that did not log a Gloo failure themselves (a rank that saw its peer
// leave or time out was alive then): the candidates for the rank that went away.
std::vector<int64_t> Candidates(const EvidenceSet& ev, const PgStall* stall) {
  if (!stall) return {};
  std::set<int64_t> reported;
  for (const GlooSignal& s : ev.gloo) {
    if (s.global_rank) reported.insert(*s.global_rank);
  }
  std::vector<int64_t> out;
  for (int64_t r : stall->missing) {
    if (!reported.count(r)) out.push_back(r);
  }
  return out;
}

void PlaceAt(const PgStall* stall, Finding& f) {
  if (!stall) return;
  f.op = stall->op;
  f.seq = stall->stalled_seq;
  f.timeout_ms = stall->timeout_ms;
}

std::string StallText(const PgStall& s) {
  return fmt::format(
      "{}: process group {} ({}) at collective #{} ({}): {} recorded it{}{}", s.source, s.pg,
      s.desc.empty() ? "no description" : s.desc, s.stalled_seq, s.op.empty() ? "op unknown" : s.op,
      s.waiting.empty() ? "no rank" : RanksText(s.waiting),
      s.behind.empty() ? "" : "; " + RanksText(s.behind) + " stopped before it",
      s.missing.empty() ? "" : "; " + RanksText(s.missing) + " of the group left no dump");
}

// The set-up call a traceback or faulthandler frame of `file` shows the process in, when it is one
// that creates the process group's connections (torch's init_process_group or new_group,
// Horovod's hvd.init): a Gloo pair failing there is a start-up fault, not a rank lost mid-job.
std::string SetUpCall(const EvidenceSet& ev, const std::string& file) {
  for (const FailureSignal* s : Of(ev, FailureKind::kC10dFrame)) {
    if (s->file == file &&
        (s->op == "init_process_group" || s->op == "new_group" || s->op == "hvd.init"))
      return s->op;
  }
  return "";
}

}  // namespace

bool GlooFinding(const EvidenceSet& ev, const Verdict& v, Finding& f) {
  const PgStall* stall = GlooStall(v);
  const auto timeouts = Of(ev, GlooSignalKind::kTimeout);
  const auto left = Of(ev, GlooSignalKind::kPeerLeft);
  const auto sizes = Of(ev, GlooSignalKind::kSizeMismatch);
  if (!stall && ev.gloo.empty()) return false;
  const std::optional<int64_t> signalled_timeout =
      timeouts.empty() ? std::nullopt : timeouts.front()->timeout_ms;
  if (stall && !stall->mismatch.empty()) {
    f.kind = "collective_mismatch";
    f.ranks = stall->mismatch_minority;
    PlaceAt(stall, f);
    if (signalled_timeout) f.timeout_ms = signalled_timeout;
    f.summary = fmt::format(
        "mismatched collectives in process group {} at #{}: {}{}", stall->pg, stall->stalled_seq,
        stall->mismatch,
        f.ranks.empty() ? "" : "; rank " + FormatRankRanges(f.ranks) + " is the odd one out");
    f.evidence.push_back(fmt::format("{}: {}", stall->source, stall->mismatch));
    if (!sizes.empty()) f.evidence.push_back(Cite(*sizes.front()));
    return true;
  }
  if (!sizes.empty()) {
    f.kind = "collective_mismatch";
    PlaceAt(stall, f);
    f.summary =
        "Gloo received a message of another size than the collective expected: the ranks passed "
        "different sizes (" +
        sizes.front()->detail + ")";
    f.evidence.push_back(Cite(*sizes.front()));
    if (stall) f.evidence.push_back(StallText(*stall));
    return true;
  }
  if (!left.empty()) {
    if (const std::string setup = SetUpCall(ev, left.front()->file); !setup.empty()) {
      f.kind = "bootstrap";
      f.peer = left.front()->peer;
      f.setting = "GLOO_SOCKET_IFNAME";
      f.summary = fmt::format(
          "a Gloo peer dropped its connection while the processes were still connecting (in {}): "
          "{}; check {} and that every process reaches {}",
          setup, left.front()->detail, f.setting, setup);
      f.evidence.push_back(Cite(*left.front()));
      return true;
    }
    f.kind = "dead_rank";
    f.ranks = Candidates(ev, stall);
    PlaceAt(stall, f);
    f.peer = left.front()->peer;
    f.summary = fmt::format("a Gloo peer closed its connections{}: {}",
                            f.ranks.empty()
                                ? ""
                                : "; rank " + FormatRankRanges(f.ranks) +
                                      " of the group left no dump and is the one that went away",
                            left.front()->detail);
    f.evidence.push_back(Cite(*left.front()));
    if (stall) f.evidence.push_back(StallText(*stall));
    return true;
  }
  if (!timeouts.empty()) {
    f.kind = "collective_timeout";
    f.ranks = stall && !stall->behind.empty() ? stall->behind : Candidates(ev, stall);
    PlaceAt(stall, f);
    f.timeout_ms = signalled_timeout;
    f.summary = fmt::format(
        "a Gloo collective timed out after {} ms ({}){}", signalled_timeout.value_or(0),
        timeouts.front()->operation,
        f.ranks.empty() ? "" : "; rank " + FormatRankRanges(f.ranks) + " never joined it");
    f.evidence.push_back(Cite(*timeouts.front()));
    if (stall) f.evidence.push_back(StallText(*stall));
    return true;
  }
  return false;  // a Gloo stall without a failure line: the generic rules (behind ranks) apply
}

}  // namespace strata::hang
