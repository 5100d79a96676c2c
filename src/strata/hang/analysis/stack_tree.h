// Equivalence classes of main-thread stacks, STAT-style: a prefix tree over the frames from the
// outermost inwards, so 10,000 ranks collapse into a handful of leaves and each minority leaf says
// where it parted from the majority.
#ifndef STRATA_HANG_ANALYSIS_STACK_TREE_H_
#define STRATA_HANG_ANALYSIS_STACK_TREE_H_

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// "0-16,18-39": sorted, deduplicated, consecutive runs joined.
std::string FormatRankRanges(std::vector<int64_t> ranks);

/// "rank 3" or "ranks 0-16,18-39".
std::string RanksText(const std::vector<int64_t>& ranks);

/// RanksText, or "pid 4100" / "pids 4101-4102" when every id is in `pid_only` (processes known
/// by pid because no RANK was found): a pid is never printed as a rank.
std::string IdsText(const std::vector<int64_t>& pid_only, const std::vector<int64_t>& ids);

/// Runs of consecutive ranks, [first, last] each.
using RankRuns = std::vector<std::pair<int64_t, int64_t>>;

/// The ranks of [0, world) that are not in `have`, as runs: walked over `have`, not over the
/// world, so the work follows the evidence, not a rank count read from it.
RankRuns RankGaps(const std::set<int64_t>& have, int64_t world);
int64_t RunsSize(const RankRuns& runs);
/// "0,5-1048575", as FormatRankRanges writes the same ranks.
std::string FormatRuns(const RankRuns& runs);

struct StackClass {
  std::vector<int64_t> members;  // ids given to StackTree::Add, sorted
  std::vector<PyFrame> frames;   // the first member's stack, innermost first
  // Outermost frames this class shares with the largest class (its whole depth for the largest).
  size_t shared_depth = 0;
};

class StackTree {
 public:
  /// Adds one stack (innermost first, as py-spy prints). Line numbers are ignored: two ranks in
  /// the same function of the same file are in the same place.
  void Add(int64_t member, const std::vector<PyFrame>& frames);

  /// One class per distinct stack, largest first (ties: smallest member first).
  std::vector<StackClass> Classes() const;

 private:
  struct Node {
    int parent = -1;
    size_t depth = 0;
    std::unordered_map<int, int> children;  // interned frame -> node
    std::vector<int64_t> members;           // processes whose stack ends here
    size_t stack_index = 0;                 // into stacks_: the first member's stack
  };
  int Intern(const PyFrame& frame);

  std::vector<Node> nodes_{Node{}};
  std::unordered_map<std::string, int> frame_ids_;
  std::vector<std::vector<PyFrame>> stacks_;  // kept so classes can show a representative
  std::string key_;                           // scratch buffer for Intern
};

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_STACK_TREE_H_
