#include "strata/hang/parsers/horovod_stall.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang {
namespace {

constexpr size_t kMaxTextChars = 300;
constexpr int64_t kMaxRank = 10'000'000;  // a list naming a higher rank is not a rank list

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// "0, 3, 5]" (after "[missing ranks:" or "[ready ranks:"): the numbers up to the ']'.
std::optional<std::vector<int64_t>> NumberList(std::string_view rest) {
  std::vector<int64_t> out;
  while (out.size() < 100000) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ',')) rest.remove_prefix(1);
    if (rest.empty() || rest.front() == ']') break;
    size_t used = 0;
    const auto r = LeadingInt(rest, &used);
    if (!r || used == 0 || *r < 0 || *r > kMaxRank) return std::nullopt;
    out.push_back(*r);
    rest.remove_prefix(used);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// "3: [t1, t2]" or "3!: [" (behind any prefix word): the rank and whether it is marked '!'.
std::optional<std::pair<int64_t, bool>> RankLine(std::string_view line) {
  const size_t at = line.find(": [");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view head = line.substr(0, at);
  if (const size_t sp = head.rfind(' '); sp != std::string_view::npos) head.remove_prefix(sp + 1);
  const bool marked = head.ends_with('!');
  if (marked) head.remove_suffix(1);
  if (head.empty() || head.size() > 7 || !std::all_of(head.begin(), head.end(), IsDigit))
    return std::nullopt;
  return std::make_pair(*LeadingInt(head), marked);
}

}  // namespace

std::string StripMpiTags(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  size_t pos = 0;
  while (pos < line.size()) {
    const size_t open = line.find('[', pos);
    if (open == std::string_view::npos) break;
    // "[" digits "," digits "]<std" ("out>:" | "err>:")
    size_t i = open + 1;
    auto digits = [&] {
      const size_t from = i;
      while (i < line.size() && IsDigit(line[i])) ++i;
      return i > from;
    };
    bool tag = digits() && i < line.size() && line[i] == ',' && (++i, digits());
    if (tag) {
      const std::string_view rest = line.substr(i);
      tag = rest.starts_with("]<stderr>:") || rest.starts_with("]<stdout>:");
    }
    if (!tag) {
      out.append(line.substr(pos, open + 1 - pos));
      pos = open + 1;
      continue;
    }
    out.append(line.substr(pos, open - pos));
    pos = i + 10;  // past "]<stderr>:"
  }
  out.append(line.substr(std::min(pos, line.size())));
  return out;
}

std::optional<int64_t> MpiTagRank(std::string_view line) {
  // "[" job "," rank "]<stdout>:" or "]<stderr>:", at the start of the line.
  if (!line.starts_with('[')) return std::nullopt;
  const size_t comma = line.find(',');
  const size_t close = line.find("]<std");
  if (comma == std::string_view::npos || close == std::string_view::npos || comma > close ||
      close > 24)
    return std::nullopt;
  const std::string_view job = line.substr(1, comma - 1);
  const std::string_view rank = line.substr(comma + 1, close - comma - 1);
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), IsDigit);
  };
  const std::string_view rest = line.substr(close + 1);
  if (!digits(job) || !digits(rank) ||
      !(rest.starts_with("<stdout>:") || rest.starts_with("<stderr>:")))
    return std::nullopt;
  return LeadingInt(rank);
}

bool HorovodStallReader::Line(std::string_view cleaned, int number) {
  const std::string untagged = Contains(cleaned, ">:") ? StripMpiTags(cleaned) : "";
  const std::string_view line = TrimSpace(untagged.empty() ? cleaned : untagged);
  // The first sentence; a terminal may split it anywhere after its start.
  if (Contains(line, "submitted to be reduced, gathered or broadcasted") ||
      Contains(line, "waiting for remainder of ranks")) {
    Flush();
    header_ = true;
    // Horovod before 0.15 printed the whole warning on one line: the sentence, "Stalled ops:" and
    // every "name [ready ranks: ...]" after it (horovod/horovod#312, #367).
    RankLists(line, number);
    return true;
  }
  if (line == "Stalled ops:" || line.ends_with(" Stalled ops:")) {
    header_ = true;
    return true;
  }
  if (header_ && (line.ends_with("Missing ranks:") || line.ends_with("Stalled ranks:"))) {
    list_ = true;
    return true;
  }
  if (list_) {
    if (const auto r = RankLine(line)) {
      shutdown_ = shutdown_ || r->second;
      Add(line, number, {r->first});
      // Horovod's TensorFlow ops carry the collective in their names ("HorovodBroadcast_...",
      // ".../HorovodAllreduce_gradients_AddN_100_0"): which collectives this rank never entered.
      std::set<std::string>& ops = missing_ops_[r->first];
      for (const char* op : {"HorovodAllreduce", "HorovodAllgather", "HorovodBroadcast",
                             "HorovodAlltoall", "HorovodReducescatter"}) {
        if (Contains(line, op)) ops.insert(op);
      }
      return true;
    }
    list_ = false;
  }
  if (current_ && Contains(line, "is stalled for longer than") && Contains(line, "Will shutdown")) {
    shutdown_ = true;
    return true;
  }
  return RankLists(line, number);
}

bool HorovodStallReader::RankLists(std::string_view line, int number) {
  // Every "[missing ranks: ...]" / "[ready ranks: ...]" of the line, in order; a list the line
  // cuts before its first number (a paste ending in "[ready ") adds nothing.
  bool found = false;
  for (const std::string_view key : {"[missing ranks:", "[ready ranks:"}) {
    for (size_t at = line.find(key); at != std::string_view::npos;
         at = line.find(key, at + key.size())) {
      const auto listed = NumberList(line.substr(at + key.size()));
      if (!listed) continue;
      std::set<int64_t> ranks(listed->begin(), listed->end());
      if (key == "[ready ranks:") {
        // Only ranks below the highest ready one are known to exist: those not listed are
        // missing.
        std::set<int64_t> missing;
        for (int64_t r = 0; r < *ranks.rbegin(); ++r) {
          if (!ranks.contains(r)) missing.insert(r);
        }
        ready_format_ = true;
        ready_.push_back(ranks);
        ranks = std::move(missing);
      }
      Add(line, number, ranks);
      found = true;
    }
  }
  return found;
}

void HorovodStallReader::Add(std::string_view line, int number, const std::set<int64_t>& ranks) {
  if (!current_) {
    current_ = FailureSignal{};
    current_->kind = FailureKind::kHorovodStall;
    current_->file = file_;
    current_->line = number;
    current_->text = std::string(line.substr(0, kMaxTextChars));
  }
  ranks_.insert(ranks.begin(), ranks.end());
}

namespace {

// The distinct ready sets when they are disjoint and cover every rank known to exist (all ranks
// up to the highest ready one): each group waits on tensors the others never submit. Empty
// otherwise (one set, overlapping sets, or a rank ready nowhere: that rank is behind).
std::vector<std::set<int64_t>> DisjointReadyGroups(const std::vector<std::set<int64_t>>& lists) {
  std::vector<std::set<int64_t>> groups;
  for (const std::set<int64_t>& l : lists) {
    if (std::find(groups.begin(), groups.end(), l) == groups.end()) groups.push_back(l);
  }
  if (groups.size() < 2) return {};
  std::set<int64_t> all;
  size_t total = 0;
  for (const std::set<int64_t>& g : groups) {
    all.insert(g.begin(), g.end());
    total += g.size();
  }
  if (total != all.size()) return {};  // a rank in two groups: not a split
  if (all.empty() || static_cast<int64_t>(all.size()) != *all.rbegin() + 1) return {};
  return groups;
}

// "Stalled ranks:" lists, per rank, the tensors that rank never submitted while another rank
// did. Rank 0 missing only broadcasts and rank 1 missing only allreduces (google/automl#563) means
// rank 1 entered the broadcasts and rank 0 the allreduces: each waits in a collective the other
// never enters, a split rather than ranks behind. True when at least two ranks are listed, each
// with the collective of its tensors named, and no collective is missing on two of them.
bool SplitByCollective(const std::map<int64_t, std::set<std::string>>& missing_ops) {
  if (missing_ops.size() < 2) return false;
  std::set<std::string> seen;
  for (const auto& [rank, ops] : missing_ops) {
    if (ops.empty()) return false;
    for (const std::string& op : ops) {
      if (!seen.insert(op).second) return false;
    }
  }
  return true;
}

}  // namespace

void HorovodStallReader::Flush() {
  if (current_) {
    current_->ranks.assign(ranks_.begin(), ranks_.end());
    if (const auto groups = DisjointReadyGroups(ready_); !groups.empty()) {
      // The smallest group is the one on another path, when it is smaller than every other.
      const auto smallest =
          std::min_element(groups.begin(), groups.end(),
                           [](const auto& a, const auto& b) { return a.size() < b.size(); });
      const bool unique = std::count_if(groups.begin(), groups.end(), [&](const auto& g) {
                            return g.size() == smallest->size();
                          }) == 1;
      current_->split = true;
      current_->ranks.clear();
      if (unique) current_->ranks.assign(smallest->begin(), smallest->end());
    }
    if (SplitByCollective(missing_ops_)) {
      current_->split = true;
      current_->ranks.clear();
    }
    current_->detail =
        ready_format_
            ? "Horovod stall inspector (ready-ranks format): ranks below the highest ready one "
              "that are not listed as ready"
            : "Horovod stall inspector: tensors not submitted by these ranks";
    if (current_->split && !ready_format_) {
      current_->detail =
          "Horovod stall inspector: the stalled ranks never submitted different collectives "
          "(each waits in a collective another rank never entered)";
    } else if (current_->split) {
      current_->detail =
          "Horovod stall inspector (ready-ranks format): the ranks are ready on different "
          "tensors, in disjoint groups";
    }
    if (shutdown_) current_->detail += "; stalled past the shutdown time, Horovod shuts down";
    done_.push_back(std::move(*current_));
  }
  current_.reset();
  ranks_.clear();
  ready_.clear();
  missing_ops_.clear();
  header_ = list_ = shutdown_ = ready_format_ = false;
}

std::vector<FailureSignal> HorovodStallReader::Take() {
  Flush();
  return std::move(done_);
}

}  // namespace strata::hang
