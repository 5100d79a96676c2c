// How much of a result to build. The numbers are the same either way: kNumbersOnly skips the
// text (items' names and formulas, traffic purposes, link names, caveats) that the views print
// and `--explain` shows. The planner evaluates thousands to millions of layouts and reads only
// their numbers; formatting and allocating that text cost it most of its time.
#ifndef STRATA_CORE_DETAIL_H_
#define STRATA_CORE_DETAIL_H_

namespace strata {

enum class Detail { kExplained, kNumbersOnly };

/// A fixed name or note, only when explained: kNumbersOnly results leave their text empty, and a
/// long literal assigned to a std::string allocates.
inline const char* FixedText(Detail detail, const char* text) {
  return detail == Detail::kExplained ? text : "";
}

}  // namespace strata

#endif  // STRATA_CORE_DETAIL_H_
