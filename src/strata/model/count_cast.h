// Model arithmetic mixes integer counts (layers, heads, widths) with double FLOP and parameter
// totals; one named conversion keeps those formulas readable without a cast on every term.
#ifndef STRATA_MODEL_COUNT_CAST_H_
#define STRATA_MODEL_COUNT_CAST_H_

#include <cstdint>

namespace strata {

/// A count as a double, for formulas that multiply counts into FLOP or parameter totals.
inline double AsReal(int64_t count) { return static_cast<double>(count); }

}  // namespace strata

#endif  // STRATA_MODEL_COUNT_CAST_H_
