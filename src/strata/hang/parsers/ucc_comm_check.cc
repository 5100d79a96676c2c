#include "strata/hang/parsers/ucc_comm_check.h"

#include <algorithm>
#include <utility>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang {
namespace {

constexpr size_t kMaxTextChars = 300;
constexpr size_t kMaxListedRanks = 100000;  // a bound on a hostile list, above any real job

// "[ 0 ]", "[1 2 3]" or "[0, 3]" after `from`: the ranks listed.
std::set<int64_t> BracketRanks(std::string_view line, size_t from) {
  std::set<int64_t> out;
  const size_t open = line.find('[', from);
  const size_t close = open == std::string_view::npos ? open : line.find(']', open);
  if (close == std::string_view::npos) return out;
  std::string_view inside = line.substr(open + 1, close - open - 1);
  while (out.size() < kMaxListedRanks) {
    while (!inside.empty() &&
           (inside.front() == ' ' || inside.front() == ',' || inside.front() == '\t'))
      inside.remove_prefix(1);
    size_t used = 0;
    const auto r = LeadingInt(inside, &used);
    if (!r || used == 0) break;
    out.insert(*r);
    inside.remove_prefix(used);
  }
  return out;
}

}  // namespace

bool UccCommCheckReader::Line(std::string_view line, int number) {
  static constexpr std::string_view kAbort = "Aborting comms #";
  static constexpr std::string_view kDue = "due to the problematic ranks:";
  if (line.starts_with(kAbort) && Contains(line, kDue)) {
    Flush();
    FailureSignal s;
    s.kind = FailureKind::kUccNotPosted;
    s.seq = LeadingInt(line.substr(kAbort.size()));
    const size_t op = line.find("(op=");
    if (op != std::string_view::npos) {
      const std::string_view rest = line.substr(op + 4);
      s.op = std::string(rest.substr(0, std::min<size_t>(rest.find(')'), 60)));
    }
    s.file = file_;
    s.line = number;
    s.text = std::string(line.substr(0, kMaxTextChars));
    current_ = std::move(s);
    problematic_ = BracketRanks(line, line.find(kDue));
    not_posted_.clear();
    return true;
  }
  if (!current_) return false;
  if (line.starts_with("Ranks [")) {
    // "Ranks [0] are 'Collective wasn't posted'": the state of those problematic ranks.
    if (Contains(line, "wasn't posted") || Contains(line, "was not posted")) {
      for (int64_t r : BracketRanks(line, 0)) {
        if (problematic_.count(r) != 0) not_posted_.insert(r);
      }
    }
    return true;
  }
  if (line.starts_with("Comms status of other ranks")) return true;
  Flush();
  return false;
}

void UccCommCheckReader::Flush() {
  if (current_ && !not_posted_.empty()) {
    current_->ranks.assign(not_posted_.begin(), not_posted_.end());
    current_->detail = "ProcessGroupUCC's comm check: the ranks never posted collective #" +
                       std::to_string(current_->seq.value_or(0)) + " (" + current_->op +
                       ") the others wait in";
    done_.push_back(std::move(*current_));
  }
  current_.reset();
  problematic_.clear();
  not_posted_.clear();
}

std::vector<FailureSignal> UccCommCheckReader::Take() {
  Flush();
  return std::exchange(done_, {});
}

}  // namespace strata::hang
